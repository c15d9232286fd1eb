import { failedToOpen, type DirectWatch } from './collectionRequest.js';
import { directGet } from './directGet.js';
import { FAILURE_BODY_LIMIT, failureOf } from './http.js';
import type { IdleWatchdog } from './idleWatchdog.js';
import { describeError } from './listWatchFaults.js';
import type { HttpSettings, WatchEnd, WatchLineHandler } from './listWatchTransport.js';
import { ResponseFramingError, type ResponseHead } from './responseFraming.js';
import { endOnce, interruption, watchLineReader } from './watchLines.js';

/**
 * One watch sent by `directGet` and read to its end, as `readWatch` reads
 * one over node:http: the same lines to `handler`, the same ends. A
 * failed answer (not 200) is read for its Status, as `readFailure` reads
 * it; no answer at all is a failed request, as `openCollection` says it.
 * Never rejects.
 */
export function readDirectWatch(watch: DirectWatch, handler: WatchLineHandler, request: AbortController, activity: IdleWatchdog, http: HttpSettings): Promise<WatchEnd> {
  return new Promise<WatchEnd>((resolve) => {
    const { finish, ended } = endOnce(request, resolve);
    const interrupted = () => interruption(activity, http.signal);
    const reader = watchLineReader(handler, finish, ended, http.maxObjectBytes, http.codec, true);
    let head: ResponseHead | undefined;
    /** A failed answer's body, as it comes (copied: the socket's buffer is read into again). */
    let failed: Buffer[] | undefined;
    let failedBytes = 0;
    const failure = () => failureOf((head as ResponseHead).statusCode, head?.headers.get('retry-after'), Buffer.concat(failed ?? [], failedBytes));
    directGet(watch.url, watch.options, request.signal, {
      head: (h) => {
        head = h;
        watch.answered(h.statusCode);
        if (h.statusCode === 200) handler.opened?.();
        else failed = [];
      },
      body: (chunk) => {
        activity.touch();
        if (failed !== undefined) {
          const kept = Math.min(chunk.length, FAILURE_BODY_LIMIT - failedBytes);
          if (kept > 0) failed.push(Buffer.from(chunk.subarray(0, kept)));
          failedBytes += kept;
          return;
        }
        try {
          reader.push(chunk);
        } catch (err) {
          // A line longer than a string can hold, say: the watch ends, to be reopened from the last good version.
          finish({ kind: 'error', reason: describeError(err) });
        }
      },
      end: () => {
        if (failed !== undefined) return finish({ kind: 'failed', failure: failure() });
        try {
          reader.end();
        } catch (err) {
          finish({ kind: 'error', reason: describeError(err) });
        }
        finish({ kind: 'closed' });
      },
      closed: (error) => {
        if (head === undefined) {
          watch.answered(0);
          return finish(interrupted() ?? failedToOpen(error ?? new Error('the connection closed'), 'watch'));
        }
        if (failed !== undefined) return finish(interrupted() ?? { kind: 'failed', failure: failure() });
        // Bytes that are not HTTP/1.1 say more than a broken connection does.
        if (error instanceof ResponseFramingError && !error.cutShort) return finish(interrupted() ?? { kind: 'error', reason: `watch response broke off: ${error.message}` });
        finish(interrupted() ?? { kind: 'dropped' });
      },
    });
  });
}
