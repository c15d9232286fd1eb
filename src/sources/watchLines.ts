import type { CompactCodec } from '../compact/compactCodec.js';
import type { IdleWatchdog } from './idleWatchdog.js';
import type { WatchEnd, WatchLineHandler } from './listWatchTransport.js';
import { WatchLineReader } from './watchLineReader.js';

/**
 * The line reader of a watch: each line to `handler` until the watch has
 * `ended`, and `finish` with how it ends once a line ends it (or cannot be
 * read). `volatile`: the chunks pushed are overwritten once `push` returns.
 */
export function watchLineReader(
  handler: WatchLineHandler,
  finish: (end: WatchEnd) => void,
  ended: () => boolean,
  maxLineBytes: number,
  codec: CompactCodec | undefined,
  volatile: boolean,
): WatchLineReader {
  return new WatchLineReader(
    (line) => {
      if (ended()) return;
      const end = handler.line(line);
      if (end !== undefined) finish(end);
    },
    (error) => {
      if (!ended()) finish(handler.malformed(error));
    },
    maxLineBytes,
    (bytes) => {
      if (ended()) return;
      const end = handler.oversized?.(bytes);
      if (end !== undefined) finish(end);
    },
    codec === undefined ? undefined : (buffer, start, end) => codec.line(buffer, start, end),
    volatile,
  );
}

/**
 * How a watch's reading ends, once: the first `finish` aborts the request
 * and resolves with its end; later ones (the close that the abort causes)
 * do nothing.
 */
export function endOnce(request: AbortController, resolve: (end: WatchEnd) => void): { finish: (end: WatchEnd) => void; ended: () => boolean } {
  let ended = false;
  return {
    finish: (end) => {
      if (ended) return;
      ended = true;
      request.abort();
      resolve(end);
    },
    ended: () => ended,
  };
}

/** How a watch ended when the watchdog (`idle`) or the source (`aborted`, `stop`) cut it off; undefined when neither did. */
export function interruption(activity: IdleWatchdog, stop: AbortSignal): WatchEnd | undefined {
  if (activity.idle()) return { kind: 'idle' };
  if (stop.aborted) return { kind: 'aborted' };
  return undefined;
}
