import { readBody, readFailure } from './http.js';
import { idleWatchdog } from './idleWatchdog.js';
import { openCollection, requestAbort } from './collectionRequest.js';
import { describeError } from './listWatchFaults.js';
import type { HttpSettings, ListPage, PageAnswer } from './listWatchTransport.js';

/**
 * One list request, read whole and parsed into a page. A response that
 * sends nothing for `idleTimeout` (a server or proxy stalled mid-answer) is
 * given up, as a silent watch is; without that the source would wait for
 * ever. The request is not aborted once read, so its socket can be reused.
 */
export async function readListPage(http: HttpSettings, query: URLSearchParams): Promise<PageAnswer> {
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
    let read: { body: Buffer; truncated: boolean };
    try {
      read = await readBody(response, undefined, watchdog.touch);
    } catch (err) {
      return interrupted() ?? { kind: 'error', reason: describeError(err) };
    }
    if (read.truncated) return { kind: 'error', reason: 'list page larger than 64 MiB; lower pageSize' };
    return parsePage(read.body, http.resource);
  } finally {
    watchdog.stop();
    release();
  }
}

/** A list body as a page; a list with no items may send `"items": []` or leave `items` out. */
function parsePage(body: Buffer, resource: string): PageAnswer {
  let page: unknown;
  try {
    page = JSON.parse(body.toString('utf8'));
  } catch (err) {
    return { kind: 'error', reason: `list of ${resource} answered with a body that is not JSON: ${(err as Error).message}` };
  }
  if (page !== null && typeof page === 'object') {
    const items = (page as { items?: unknown }).items;
    if (Array.isArray(items)) return { kind: 'ok', page: page as ListPage };
    if (items == null) return { kind: 'ok', page: { ...(page as object), items: [] } };
  }
  return { kind: 'error', reason: `list of ${resource} answered with something that is not a list` };
}
