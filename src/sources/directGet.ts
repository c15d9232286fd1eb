import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import * as tls from 'node:tls';
import { ResponseFraming, type ResponseHead } from './responseFraming.js';

/** What a socket reads into at a time: one buffer for the life of the request. */
const READ_BUFFER_BYTES = 64 * 1024;

/** The TLS options of a request that the socket is made with (the kubeconfig's CA, client certificate, ...). */
const TLS_OPTIONS = [
  'ca',
  'cert',
  'key',
  'pfx',
  'passphrase',
  'rejectUnauthorized',
  'servername',
  'ciphers',
  'crl',
  'secureProtocol',
  'secureOptions',
  'honorCipherOrder',
  'ecdhCurve',
  'dhparam',
  'sessionIdContext',
  'minVersion',
  'maxVersion',
] as const;

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const UNSAFE_VALUE = /[\r\n\0]/;

export interface DirectGetHandlers {
  /** The response's head. */
  head(head: ResponseHead): void;
  /** Bytes of the body, valid only during the call: the socket reads into them again afterwards. */
  body(chunk: Buffer): void;
  /** The body is complete. */
  end(): void;
  /**
   * The connection is closed: called once, last, whatever happened.
   * `error` is why it failed (refused, reset, TLS, a response that is not
   * HTTP/1.1, a throw from a handler), undefined when the response was read
   * whole or the request was aborted.
   */
  closed(error: Error | undefined): void;
}

/**
 * Whether a request with these options (`requestTarget`'s) can be sent
 * by `directGet`: the kubeconfig made a plain agent for it, not a proxy's
 * (client-node makes a proxy agent when the cluster has a `proxy-url`).
 */
export function canSendDirectly(options: https.RequestOptions): boolean {
  const agent = options.agent;
  return agent !== undefined && agent !== false && (agent.constructor === https.Agent || agent.constructor === http.Agent) && options.socketPath === undefined;
}

/**
 * A GET over a connection of its own, read without node:http: the
 * socket reads into one buffer for the life of the request (`onread`),
 * `ResponseFraming` finds the body in it, and the body goes to the
 * handlers as views of that buffer. node:http instead allocates a buffer
 * per read and copies each piece of body out of it into another, and
 * passes each through two streams: for a watch of 2 KB events that was
 * most of the transport's cost (bench/watch.ts).
 *
 * Made with the same URL, headers, credentials and TLS material as
 * `getStream`'s request; only for options that `canSendDirectly` accepts.
 * The connection is never reused: it is closed once the response has been
 * read or the request aborted.
 */
export function directGet(url: URL, options: https.RequestOptions, signal: AbortSignal, handlers: DirectGetHandlers): void {
  let head: string;
  try {
    head = requestHead(url, options);
  } catch (err) {
    handlers.closed(err as Error);
    return;
  }
  // Stopped already (while the kubeconfig gave its credentials, say): no connection is opened only to be closed.
  if (signal.aborted) {
    handlers.closed(undefined);
    return;
  }
  let failure: Error | undefined;
  let closed = false;
  const fail = (err: unknown) => {
    failure ??= err instanceof Error ? err : new Error(String(err));
    socket.destroy();
  };
  const framing = new ResponseFraming({
    head: (h) => handlers.head(h),
    body: (buf, start, end) => handlers.body(buf.subarray(start, end)),
    end: () => {
      handlers.end();
      socket.destroy();
    },
  });
  const buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
  const onread = {
    buffer,
    callback: (length: number): boolean => {
      if (closed || failure !== undefined) return false;
      try {
        // A view of its own per read: readers that remember something of a buffer (the JSON scanner) know it is new bytes.
        framing.push(buffer.subarray(0, length));
      } catch (err) {
        fail(err);
      }
      return true;
    },
  };
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const secure = url.protocol === 'https:';
  const port = url.port === '' ? (secure ? 443 : 80) : Number(url.port);
  const socket: net.Socket = secure ? tls.connect({ ...tlsOptions(options, host), host, port, ALPNProtocols: ['http/1.1'], onread } as tls.ConnectionOptions) : net.connect({ host, port, onread });
  const abort = () => socket.destroy();
  signal.addEventListener('abort', abort, { once: true });
  socket.setNoDelay(true);
  socket.on('error', (err) => {
    failure ??= err;
  });
  socket.on('end', () => {
    try {
      framing.close();
    } catch (err) {
      failure ??= err as Error;
    }
  });
  socket.on('close', () => {
    closed = true;
    signal.removeEventListener('abort', abort);
    // Destroyed by an abort, or once the response was whole: nothing failed.
    handlers.closed(framing.done || (signal.aborted && failure === undefined) ? undefined : (failure ?? new Error('the connection closed before the response was complete')));
  });
  socket.write(head);
}

/** The request's head, as node:http would write it for these options; throws for a header it would refuse. */
function requestHead(url: URL, options: https.RequestOptions): string {
  const lines = [`GET ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`];
  let authorization = false;
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value === undefined) continue;
    if (!TOKEN.test(name)) throw new TypeError(`invalid header name ${JSON.stringify(name)}`);
    if (name.toLowerCase() === 'authorization') authorization = true;
    for (const one of Array.isArray(value) ? value : [String(value)]) {
      if (UNSAFE_VALUE.test(one)) throw new TypeError(`invalid character in the value of header ${JSON.stringify(name)}`);
      lines.push(`${name}: ${one}`);
    }
  }
  // node:http turns `auth` (a kubeconfig's username and password) into Basic credentials the same way.
  if (options.auth !== undefined && options.auth !== null && !authorization) lines.push(`Authorization: Basic ${Buffer.from(options.auth).toString('base64')}`);
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** The request's TLS material, and the name its certificate is checked against (as https.Agent chooses it: never an IP address). */
function tlsOptions(options: https.RequestOptions, host: string): tls.ConnectionOptions {
  const out: Record<string, unknown> = {};
  const given = options as Record<string, unknown>;
  for (const name of TLS_OPTIONS) if (given[name] !== undefined) out[name] = given[name];
  if (out.servername === undefined && net.isIP(host) === 0) out.servername = host;
  return out as tls.ConnectionOptions;
}
