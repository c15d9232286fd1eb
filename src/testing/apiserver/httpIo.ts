import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { ApiError, badRequest, requestEntityTooLarge, unsupportedMediaType } from './statusError.js';

/** Reading request bodies and writing JSON responses, with kube's limits and errors. */

/** kube-apiserver's limit on a request body. */
export const maxBodyBytes = 3 * 1024 * 1024;

export function readBody(req: IncomingMessage, limit = maxBodyBytes): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    req.on('data', (chunk: Buffer) => {
      if (failed) return;
      size += chunk.length;
      if (size > limit) {
        failed = true;
        reject(requestEntityTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => {
      if (!failed) resolve(Buffer.concat(chunks).toString('utf8'));
    });
    req.on('error', (error) => {
      if (!failed) {
        failed = true;
        reject(error);
      }
    });
  });
}

/** The media type of a Content-Type header, without parameters, lowercased. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0].trim().toLowerCase();
}

export const objectMediaTypes = ['application/json', 'application/yaml'] as const;

/** Parses a create/update body in JSON or YAML; other media types are 415, bad syntax 400. */
export function parseObjectBody(text: string, contentType: string | undefined): unknown {
  const type = mediaType(contentType);
  if (type === '' || type === 'application/json' || type === '*/*') return parseJson(text);
  if (type === 'application/yaml') return parseYamlBody(text);
  throw unsupportedMediaType(type, objectMediaTypes);
}

export function parseJson(text: string): unknown {
  if (text.trim() === '') throw badRequest('the request body is empty: expected a JSON object');
  try {
    return JSON.parse(text);
  } catch (error) {
    throw badRequest(`the request body is not valid JSON: ${(error as Error).message}`);
  }
}

export function parseYamlBody(text: string): unknown {
  if (text.trim() === '') throw badRequest('the request body is empty: expected a YAML or JSON object');
  try {
    return parseYaml(text, { schema: 'core', uniqueKeys: true }) as unknown;
  } catch (error) {
    throw badRequest(`the request body is not valid YAML: ${(error as Error).message}`);
  }
}

/** Parses an optional JSON body (DELETE options): empty means none. */
export function parseOptionalJson(text: string): unknown {
  return text.trim() === '' ? undefined : parseJson(text);
}

export function sendJsonText(res: ServerResponse, status: number, json: string, headers: Record<string, string | string[]> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json), ...headers });
  res.end(json);
}

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string | string[]> = {}): void {
  sendJsonText(res, status, JSON.stringify(body), headers);
}

export function sendError(res: ServerResponse, error: ApiError): void {
  sendJson(res, error.code, error.toStatus(), { ...error.headers });
}
