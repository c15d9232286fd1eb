import { request } from 'node:http';
import type { ServerResponse } from 'node:http';
import type { KubeObject } from '../../types.js';
import { apiVersionOf, type ResourceType } from '../api/resourceType.js';
import { ApiError, statusFor } from '../api/statusError.js';
import type { ExchangeContext, PreparedRequest } from '../http/exchange.js';
import { atStorageVersion, type ConvertedRoute } from './convertedRequest.js';
import { convertObjects } from './conversionWebhook.js';

/**
 * A watch through a version that a conversion webhook converts: the server
 * watches itself through the storage version (over its own HTTP, so the
 * watch keeps every rule and fault of a watch) and passes each event on in
 * order, its object converted. A conversion that fails ends the watch with
 * an `ERROR` event carrying the 500, as kube-apiserver's watch does.
 */
export function watchConverted(ctx: ExchangeContext, prepared: PreparedRequest, res: ServerResponse, route: ConvertedRoute): void {
  const type = prepared.type as ResourceType;
  const desired = apiVersionOf(type);
  const target = atStorageVersion(prepared, route.storageType).request.url;
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (prepared.request.headers.authorization !== undefined) headers.Authorization = prepared.request.headers.authorization;
  const upstream = request(`http://${ctx.address()}${target.pathname}${target.search}`, { headers, agent: false }, (up) => {
    prepared.log.status = up.statusCode ?? 0;
    if (up.statusCode !== 200) {
      res.writeHead(up.statusCode ?? 500, { 'Content-Type': up.headers['content-type'] ?? 'application/json' });
      up.pipe(res);
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    let buffered = '';
    let chain = Promise.resolve();
    let ended = false;
    const pass = async (line: string): Promise<void> => {
      if (ended) return;
      const event = JSON.parse(line) as { type: string; object: KubeObject };
      if (event.type === 'BOOKMARK') event.object = { ...event.object, apiVersion: desired };
      else if (event.object?.kind === type.kind) [event.object] = (await convertObjects(route.conversion, type, [event.object], desired)) as [KubeObject];
      if (!ended) res.write(`${JSON.stringify(event)}\n`);
    };
    const fail = (error: unknown): void => {
      if (ended) return;
      ended = true;
      const status = error instanceof ApiError ? error : statusFor(500, { message: `Internal error occurred: ${(error as Error).message}` });
      ctx.logger.warn({ err: error, path: prepared.request.url.pathname }, 'apiserver: a converted watch ends');
      res.end(`${JSON.stringify({ type: 'ERROR', object: status.toStatus() })}\n`);
      upstream.destroy();
    };
    up.setEncoding('utf8');
    up.on('data', (chunk: string) => {
      buffered += chunk;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) if (line.trim() !== '') chain = chain.then(() => pass(line)).catch(fail);
    });
    up.on('end', () => {
      chain = chain.then(() => {
        if (!ended) res.end();
        ended = true;
      });
    });
    up.on('error', () => res.destroy());
  });
  upstream.on('error', (error) => {
    if (!res.headersSent) {
      res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(statusFor(500, { message: `Internal error occurred: ${error.message}` }).toStatus()));
    } else res.destroy();
  });
  upstream.end();
  res.on('close', () => upstream.destroy());
}
