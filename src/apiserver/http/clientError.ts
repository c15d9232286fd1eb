import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { ApiError, badRequest, methodNotAllowed } from '../api/statusError.js';

/**
 * The answer to a request that Node's HTTP parser refused before any handler saw it: still a
 * Status body, as clients expect of every error, with the code the problem deserves (an unknown
 * method is 405, as kube-apiserver answers it; an oversized head is 431, as Go's server answers it).
 */
export function clientErrorStatus(error: NodeJS.ErrnoException): ApiError {
  switch (error.code) {
    case 'HPE_INVALID_METHOD':
      return methodNotAllowed();
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(431, 'RequestHeaderFieldsTooLarge', 'the request line and headers are larger than the server accepts');
    default:
      return badRequest(`the request could not be parsed as HTTP/1.1 (${error.code ?? error.message})`);
  }
}

/** Writes the Status for `error` on `socket` and closes it (or just closes it when it can no longer be written). */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const status = clientErrorStatus(error);
  const body = JSON.stringify(status.toStatus());
  socket.end(
    `HTTP/1.1 ${status.code} ${STATUS_CODES[status.code] ?? 'Error'}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
