import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../../logger.js';

/** A server that listens, and the one way to stop it. */
export interface Listening {
  /** The address actually bound (the port chosen, for port 0). */
  readonly address: AddressInfo;
  /** Stops listening and closes open connections; called again, the same promise. */
  close(): Promise<void>;
}

/**
 * Makes `server` listen on `host`:`port` (every interface when `host` is
 * undefined); rejects with `<what> cannot listen on <host>:<port>: <why>`.
 * Later server errors are logged, never thrown into the process.
 */
export async function listenOn(server: Server, port: number, host: string | undefined, what: string, logger: Logger): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => reject(new Error(`${what} cannot listen on ${host ?? '*'}:${port}: ${err.message}`, { cause: err }));
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  server.on('error', (err) => logger.error({ err: err.message }, `${what} error`));
  let closing: Promise<void> | undefined;
  return {
    address: server.address() as AddressInfo,
    close: () => {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
