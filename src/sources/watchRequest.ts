import type { IncomingMessage } from 'node:http';
import { readFailure } from './http.js';
import { idleWatchdog, type IdleWatchdog } from './idleWatchdog.js';
import { openCollection, requestAbort } from './collectionRequest.js';
import { readDirectWatch } from './directWatch.js';
import { endOnce, interruption, watchLineReader } from './watchLines.js';
import { describeError } from './listWatchFaults.js';
import type { HttpSettings, WatchEnd, WatchLineHandler } from './listWatchTransport.js';
import type { CompactCodec } from '../compact/compactCodec.js';

/**
 * One watch request, read to its end: each line goes to `handler` as it
 * arrives, and the result says how the watch ended. The request is always
 * aborted once it has ended, so that no socket outlives it.
 */
export async function readWatch(http: HttpSettings, query: URLSearchParams, handler: WatchLineHandler): Promise<WatchEnd> {
  const { controller, release } = requestAbort(http.signal);
  const watchdog = idleWatchdog('watch', http, () => controller.abort());
  try {
    const opened = await openCollection(http, query, 'watch', controller.signal);
    if (opened.kind === 'direct') return await readDirectWatch(opened, handler, controller, watchdog, http);
    if (opened.kind !== 'ok') return interruption(watchdog, http.signal) ?? opened;
    if (opened.response.statusCode !== 200) return { kind: 'failed', failure: await readFailure(opened.response) };
    handler.opened?.();
    return await readWatchResponse(opened.response, handler, controller, watchdog, http.signal, http.maxObjectBytes, http.codec);
  } finally {
    watchdog.stop();
    release();
    controller.abort();
  }
}

/**
 * Reads one watch response's body line by line until a line ends the watch
 * (the handler says so), the server closes it, the connection drops, the
 * watchdog finds it silent, or the source stops. Never rejects: a throw while
 * reading (a line longer than a string can hold, say) ends the watch as an
 * `error`, to be reopened from the last good resourceVersion.
 */
function readWatchResponse(
  response: IncomingMessage,
  handler: WatchLineHandler,
  request: AbortController,
  activity: IdleWatchdog,
  stop: AbortSignal,
  maxLineBytes: number,
  codec: CompactCodec | undefined,
): Promise<WatchEnd> {
  return new Promise<WatchEnd>((resolve) => {
    const { finish, ended } = endOnce(request, resolve);
    const reader = watchLineReader(handler, finish, ended, maxLineBytes, codec, false);
    response.on('data', (chunk: Buffer) => {
      activity.touch();
      try {
        reader.push(chunk);
      } catch (err) {
        finish({ kind: 'error', reason: describeError(err) });
      }
    });
    response.on('end', () => {
      try {
        reader.end();
      } catch (err) {
        finish({ kind: 'error', reason: describeError(err) });
      }
      finish({ kind: 'closed' });
    });
    response.on('close', () => finish(interruption(activity, stop) ?? { kind: 'dropped' }));
    response.on('error', () => {
      // 'close' follows and says how it ended; the error is the dropped socket.
    });
  });
}
