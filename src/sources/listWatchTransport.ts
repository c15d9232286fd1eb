import type { KubeConfig } from '@kubernetes/client-node';
import type { SchedulerLike } from 'rxjs';
import type { Logger } from '../logger.js';
import type { RequestObserver } from '../types.js';
import type { FailedResponse } from './http.js';
import type { ListBodyHandler, ListEnvelope } from './listBodyParser.js';
import { readListPage } from './listPageRequest.js';
import type { CompactCodec } from '../compact/compactCodec.js';
import type { ListWatchError } from './listWatchError.js';
import type { MalformedWatchLineError, WatchLine } from './watchLineReader.js';
import { readWatch } from './watchRequest.js';
import { KeepAliveAgent } from './keepAliveAgent.js';

/**
 * The two requests that list-watch phases make, as results: every outcome
 * the server or the network can give is a value here, never a throw. Over
 * HTTP in `listWatch`; scripted in the phases' unit tests.
 */
export interface ListWatchTransport {
  /** One list page, parsed as it arrives: each item goes to `items` as soon as it is whole. */
  listPage(query: URLSearchParams, items: ListBodyHandler): Promise<PageAnswer>;
  /** One watch, read to its end; each line goes to `handler` as it arrives. */
  watch(query: URLSearchParams, handler: WatchLineHandler): Promise<WatchEnd>;
}

/** What a list page said besides its items (handed over one by one); nothing in it is checked. */
export type ListPage = ListEnvelope;

/** How one list request ended. */
export type PageAnswer =
  | { kind: 'ok'; page: ListPage }
  /** The item handler asked to stop reading (the source stopped, or a transform threw). */
  | { kind: 'stopped' }
  /** The server answered with a status other than 200. */
  | { kind: 'failed'; failure: FailedResponse }
  /** No page to read: the request failed, the list was silent too long, the body was cut, not JSON or not a list. */
  | { kind: 'error'; reason: string }
  /** The kubeconfig names no server to ask. */
  | { kind: 'misconfigured'; message: string }
  /** The source was stopped. */
  | { kind: 'aborted' };

/** How one watch (or streaming list) ended. */
export type WatchEnd =
  /**
   * `closed`: the server ended the response cleanly; `idle`: silent for
   * longer than the idle limit; `dropped`: the connection broke;
   * `malformed`: a line could not be read; `aborted`: the source was stopped.
   */
  | { kind: 'closed' | 'idle' | 'dropped' | 'malformed' | 'aborted' }
  /** A 410 `ERROR` event: the version watched from is no longer in the server's history. */
  | { kind: 'expired'; message: string }
  /** A status other than 200, or an `ERROR` event other than 410. */
  | { kind: 'failed'; failure: FailedResponse }
  /** The request could not be sent or answered, or the response could not be read. */
  | { kind: 'error'; reason: string }
  /** The kubeconfig names no server to ask. */
  | { kind: 'misconfigured'; message: string }
  /** A fault no retry fixes met while reading (the transform threw). */
  | { kind: 'fatal'; error: ListWatchError };

/** Reads the lines of one watch response; returns a `WatchEnd` when a line ends the watch. */
export interface WatchLineHandler {
  /** The server answered 200: the watch is open. */
  opened?(): void;
  line(line: WatchLine): WatchEnd | undefined;
  malformed(error: MalformedWatchLineError): WatchEnd;
  /** A line longer than `maxObjectBytes` was skipped. */
  oversized?(bytes: number): WatchEnd | undefined;
}

/** What every transport is given by the source: its options, resolved to their defaults. */
export interface TransportSettings {
  /** The resource's name, for logs and messages. */
  resource: string;
  scheduler: SchedulerLike;
  logger: Logger;
  /** A request that sends nothing for this long (ms) is given up. */
  idleTimeout: number;
  /** A list item or watch line larger than this (bytes) is reported and skipped. */
  maxObjectBytes: number;
  /** The `Accept` header of lists and watches (a metadata-only source asks for `PartialObjectMetadata`). */
  accept?: { list: string; watch: string };
  /** Reads objects into the compact cache's form instead of `JSON.parse` (the compact cache, a source's default). */
  codec?: CompactCodec;
}

/** What the HTTP requests need besides their query. */
export interface HttpSettings extends TransportSettings {
  kubeConfig: KubeConfig;
  /** The collection's URL path. */
  path: string;
  /** Stops the source: aborts the open request at once. */
  signal: AbortSignal;
  /** Told of each request as it is sent, and of its answer's status once its head came. */
  requests?: RequestObserver | undefined;
  /** Connections kept between the source's requests (list pages, watches); made by `httpTransport`. */
  agent?: KeepAliveAgent;
}

/** The transport of `listWatch`: GETs over node:http(s) with the kubeconfig's credentials. */
export function httpTransport(given: HttpSettings): ListWatchTransport {
  const agent = new KeepAliveAgent();
  // Its idle connections go when the source stops.
  given.signal.addEventListener('abort', () => agent.destroy(), { once: true });
  const settings: HttpSettings = { ...given, agent };
  return {
    listPage: (query, items) => readListPage(settings, query, items),
    watch: (query, handler) => readWatch(settings, query, handler),
  };
}
