import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { badRequest } from '../api/statusError.js';
import { answer, prepare, type ApiRequest } from './exchange.js';
import { errorResponse, type ApiResponse } from './httpIo.js';
import { headersOf, type HandlerContext } from './handler.js';

/**
 * Requests that ask to switch protocols (`kubectl exec`, `attach`, `port-forward` over
 * WebSocket or SPDY): this server streams nothing to or from containers, so it never switches.
 * Each goes through the same steps as any request (authentication, faults, routing) and gets its
 * answer, a Status, as a plain HTTP response on the socket, which is then closed. Clients read
 * that as a failed upgrade and print the Status's message.
 */

function rawResponse(response: ApiResponse): string {
  const headers: Record<string, string | string[]> = {
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(response.body)),
    Connection: 'close',
    ...response.headers,
  };
  const lines = [`HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ''}`];
  for (const [name, value] of Object.entries(headers)) for (const v of Array.isArray(value) ? value : [value]) lines.push(`${name}: ${v}`);
  return `${lines.join('\r\n')}\r\n\r\n${response.body}`;
}

export function createUpgradeHandler(ctx: HandlerContext): (req: IncomingMessage, socket: Duplex) => void {
  return (req, socket) => {
    socket.on('error', () => socket.destroy());
    let response: ApiResponse;
    try {
      const request: ApiRequest = { method: req.method ?? 'GET', url: new URL(req.url ?? '/', 'http://localhost'), headers: headersOf(req) };
      response = answer(ctx, prepare(ctx, request), Buffer.alloc(0));
    } catch {
      response = errorResponse(badRequest(`the request target ${JSON.stringify(req.url)} is not a valid URL`));
    }
    socket.end(rawResponse(response));
  };
}
