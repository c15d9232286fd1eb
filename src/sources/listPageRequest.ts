import type { IncomingMessage } from 'node:http';
import { readFailure } from './http.js';
import { idleWatchdog, type IdleWatchdog } from './idleWatchdog.js';
import { openCollection, requestAbort } from './collectionRequest.js';
import { ListBodyParser, type ListBodyHandler } from './listBodyParser.js';
import { describeError } from './listWatchFaults.js';
import type { HttpSettings, PageAnswer } from './listWatchTransport.js';

/**
 * One list request, its answer parsed as it streams in: each item goes to
 * `handler` once its bytes have arrived, so no answer is ever held whole,
 * whatever its size and whether or not the server honoured `limit`. A
 * response that sends nothing for `idleTimeout` (a server or proxy stalled
 * mid-answer) is given up, as a silent watch is; without that the source
 * would wait for ever. A request read to its end is not aborted, so its
 * socket can be reused; one the handler stopped early is.
 */
export async function readListPage(http: HttpSettings, query: URLSearchParams, handler: ListBodyHandler): Promise<PageAnswer> {
  const { controller, release } = requestAbort(http.signal);
  const watchdog = idleWatchdog('list', http, () => controller.abort());
  /** Why the request broke off, if it was the watchdog or the source stopping. */
  const interrupted = (): PageAnswer | undefined => {
    if (watchdog.idle() && !http.signal.aborted) return { kind: 'error', reason: `list sent nothing for ${http.idleTimeout} ms` };
    if (http.signal.aborted) return { kind: 'aborted' };
    return undefined;
  };
  try {
    const opened = await openCollection(http, query, 'list', controller.signal);
    if (opened.kind !== 'ok') return interrupted() ?? opened;
    const { response } = opened;
    watchdog.touch();
    if (response.statusCode !== 200) return { kind: 'failed', failure: await readFailure(response, watchdog.touch) };
    const codec = http.codec;
    const parser = new ListBodyParser(handler, http.maxObjectBytes, codec === undefined ? undefined : (bytes) => codec.item(bytes));
    try {
      await streamInto(response, parser, watchdog);
    } catch (err) {
      return interrupted() ?? { kind: 'error', reason: `list of ${http.resource} broke off: ${describeError(err)}` };
    }
    if (parser.done && parser.error === undefined) {
      // The handler stopped reading (unsubscribed, or a transform threw): the rest is not wanted.
      controller.abort();
      return { kind: 'stopped' };
    }
    const result = parser.end();
    if ('error' in result) return { kind: 'error', reason: `list of ${http.resource} answered with something that is not a list: ${result.error}` };
    if (parser.done) return { kind: 'stopped' };
    return { kind: 'ok', page: result.envelope };
  } finally {
    watchdog.stop();
    release();
  }
}

/** Feeds the body to the parser chunk by chunk, until its end or until the parser is done with it. */
async function streamInto(response: IncomingMessage, parser: ListBodyParser, watchdog: IdleWatchdog): Promise<void> {
  for await (const chunk of response) {
    watchdog.touch();
    parser.push(chunk as Buffer);
    if (parser.done) {
      response.destroy();
      return;
    }
  }
}
