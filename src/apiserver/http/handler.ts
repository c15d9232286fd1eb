import type { IncomingMessage, ServerResponse } from 'node:http';
import { answerWithWebhooks } from '../admission/admittedWrite.js';
import { badRequest, methodNotAllowed } from '../api/statusError.js';
import { answerConverted, conversionOf } from '../conversion/convertedRequest.js';
import { watchConverted } from '../conversion/convertedWatch.js';
import type { Faults } from '../faults.js';
import { handleWatch } from '../watch/watchHandler.js';
import { admit, answer, authenticated, failure, prepare, resourceRequest, type ApiRequest, type ExchangeContext, type PreparedRequest } from './exchange.js';
import { readBody, sendError, writeResponse } from './httpIo.js';
import type { RequestHeaders } from './requestContext.js';

/**
 * The HTTP entry point: reads a request off the socket, takes it through
 * the server's steps (exchange.ts) and writes the answer, or streams a
 * watch. A client mistake is never a 5xx; a server bug is a 500 with the
 * error logged, never a crash.
 */

export interface HandlerContext extends ExchangeContext {
  /** The HTTP server's faults: those of every request, and those of watches. */
  readonly faults: Faults;
  /** Waits `ms` unless the server closes first. */
  readonly sleep: (ms: number) => Promise<void>;
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export function headersOf(req: IncomingMessage): RequestHeaders {
  const h = req.headers;
  return {
    ...(h.accept !== undefined ? { accept: h.accept } : {}),
    ...(h['content-type'] !== undefined ? { contentType: h['content-type'] } : {}),
    ...(h['user-agent'] !== undefined ? { userAgent: header(h['user-agent']) } : {}),
    ...(h.authorization !== undefined ? { authorization: h.authorization } : {}),
    ...(h['impersonate-user'] !== undefined ? { impersonateUser: header(h['impersonate-user']) } : {}),
    ...(h['impersonate-group'] !== undefined ? { impersonateGroups: req.headersDistinct['impersonate-group'] ?? [] } : {}),
  };
}

function serveWatch(ctx: HandlerContext, prepared: PreparedRequest, res: ServerResponse): void {
  admit(ctx, prepared);
  const r = resourceRequest(ctx, prepared);
  if (r.subresource !== undefined || (r.method !== 'GET' && r.method !== 'HEAD')) throw methodNotAllowed();
  handleWatch({ ...r, res, watchFaults: ctx.faults });
}

/** Answers with the Status of what a step threw; drains what is left of the body so the connection stays usable. */
function sendFailure(ctx: HandlerContext, req: IncomingMessage, res: ServerResponse, prepared: PreparedRequest, error: unknown): void {
  const status = failure(ctx, prepared, error);
  prepared.log.status = status.code;
  req.resume();
  if (res.headersSent) res.destroy();
  else sendError(res, status);
}

async function handle(ctx: HandlerContext, req: IncomingMessage, res: ServerResponse, prepared: PreparedRequest): Promise<void> {
  if (!authenticated(ctx, prepared)) {
    req.resume();
    writeResponse(res, answer(ctx, prepared, Buffer.alloc(0)));
    return;
  }
  const delay = ctx.faults.delayFor(prepared.info);
  if (delay > 0) await ctx.sleep(delay);
  const converted = conversionOf(ctx, prepared);
  if (prepared.info.verb === 'watch') {
    try {
      if (converted === undefined) serveWatch(ctx, prepared, res);
      else {
        admit(ctx, prepared);
        watchConverted(ctx, prepared, res, converted);
      }
    } catch (error) {
      sendFailure(ctx, req, res, prepared, error);
    }
    return;
  }
  let body: Buffer;
  try {
    body = await readBody(req);
  } catch (error) {
    sendFailure(ctx, req, res, prepared, error);
    return;
  }
  const served =
    converted === undefined ? await answerWithWebhooks(ctx, prepared, body) : await answerConverted(ctx, prepared, body, converted, (p, b) => answerWithWebhooks(ctx, p, b, true));
  writeResponse(res, served);
}

export function createRequestHandler(ctx: HandlerContext): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://localhost');
    } catch {
      // Node's parser passes an absolute-form target that is no URL (`GET http://[ HTTP/1.1`).
      req.resume();
      sendError(res, badRequest(`the request target ${JSON.stringify(req.url)} is not a valid URL`));
      return;
    }
    const request: ApiRequest = { method: req.method ?? 'GET', url, headers: headersOf(req) };
    const prepared = prepare(ctx, request);
    const settle = (): void => {
      if (prepared.log.status === 0 && res.headersSent) prepared.log.status = res.statusCode;
    };
    res.on('finish', settle);
    res.on('close', settle);
    handle(ctx, req, res, prepared).catch((error: unknown) => {
      ctx.logger.error({ err: error, method: request.method, path: url.pathname }, 'apiserver: request failed');
      if (res.headersSent) res.destroy();
      else sendError(res, failure(ctx, prepared, error));
    });
  };
}
