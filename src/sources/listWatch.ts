import type { KubeConfig } from '@kubernetes/client-node';
import { asyncScheduler, Observable, type SchedulerLike } from 'rxjs';
import { defaultLogger, type Logger } from '../logger.js';
import { collectionPath, resourceName, type KubeObject, type ListWatchEvent, type RequestObserver, type ResourceRef } from '../types.js';
import { shardedListWatch } from './shardedListWatch.js';
import type { ShardSelection, SourceShard } from './sourceShard.js';
import type { BackoffOptions } from './backoff.js';
import { servedInDiscovery } from './discoveryProbe.js';
import { whenServed } from './whenServed.js';
import { Reflector } from './listWatchPhases.js';
import { httpTransport, type TransportSettings } from './listWatchTransport.js';
import type { MalformedWatchLineError } from './watchLineReader.js';

/** Why a watch ended and was opened again. */
export type WatchRestartReason = 'closed' | 'expired' | 'dropped' | 'error' | 'idle' | 'malformed' | 'throttled';

/**
 * Hooks told of what the source does, for metrics and for tests. Every
 * method is optional; none may throw.
 */
export interface ListWatchMonitor {
  /** An HTTP request is about to be sent. */
  request?(verb: 'list' | 'watch', resource: string): void;
  /**
   * A list begins: `initial`, or a re-list after `expired` history, a
   * `continue-expired` page token, or (`retry`) a streaming list the server
   * closed before its end. A list tried again after a failure keeps the
   * reason it began with.
   */
  relist?(resource: string, reason: 'initial' | 'expired' | 'continue-expired' | 'retry'): void;
  /** A watch ended and will be reopened. */
  watchRestart?(resource: string, reason: WatchRestartReason): void;
  /** One watch event arrived (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`). */
  event?(resource: string, type: string): void;
  /** A watch line could not be read; the watch is reopened from the last good resourceVersion. */
  malformedLine?(resource: string, error: MalformedWatchLineError): void;
  /** After a failure, the source waits `delayMs` before trying `verb` again. */
  retry?(info: { resource: string; verb: 'list' | 'watch'; delayMs: number; reason: string; code?: number }): void;
  /**
   * The source began failing (the first backoff after a success; a 410's
   * re-list is no failure), or recovered (a request was answered 200).
   * Told on changes only: informers read it for readiness.
   */
  status?(resource: string, status: SourceStatus): void;
  /** An object larger than `maxObjectBytes` was skipped (a list item, or a watch line). */
  skipped?(resource: string, info: { verb: 'list' | 'watch'; bytes: number }): void;
  /**
   * With `shardSelector`: where the share is cut, as the first list answer showed, and again
   * when that changes: `server` (the answer had `shardInfo`), `client` (it had not, or a
   * streaming list, which cannot say: this source drops what is not its own).
   */
  shardFilter?(resource: string, where: 'server' | 'client'): void;
}

/** Whether a source is getting answers, and if not, the failure it is retrying. */
export type SourceStatus = { healthy: true } | { healthy: false; verb: 'list' | 'watch'; reason: string; code?: number };

/**
 * Options of `listWatch()`: selectors, paging, streaming lists, transforms, timeouts, backoff, the clock, and hooks for logs and metrics.
 */
export interface ListWatchOptions<T extends KubeObject> {
  /** Only objects with these labels (kube's label selector syntax: `app=web,tier!=db`). */
  labelSelector?: string;
  /** Only objects whose fields match (kube's field selector syntax: `status.phase=Running`). */
  fieldSelector?: string;
  /**
   * Only this replica's share (KEP-5866, Kubernetes 1.36+ with `ShardedListAndWatch`): a
   * `shardSelector` text (`shardRange(object.metadata.uid, '0x0000000000000000',
   * '0x8000000000000000')`, terms joined by `||`), or the hash ranges of one field it owns
   * (`{ by: 'uid' | 'namespace', ranges: [{ start, end }] }`, bigints, `[start, end)`, `2n ** 64n`
   * the top). Sent on every list and watch. A list answer with `metadata.shardInfo` is trusted as
   * filtered; one without (a server that ignored it) is filtered here with the same FNV-1a hash,
   * said once in the log (warn) and through the monitor's `shardFilter`.
   *
   * An Observable of selections is for ranges that move (sharding membership): the source waits
   * for the first, and on each different one lists again with the new selector, so the store ends
   * up holding exactly the new share (objects no longer in it leave as `Deleted` with
   * `finalStateUnknown`, as after any re-list; see `deltas()`). An equal selection re-lists nothing.
   * Ranges that are empty mean the replica owns nothing: it sends no request, and its store is
   * emptied (`Restart` then `Synced` with no resourceVersion). A malformed selector errors the source.
   */
  shardSelector?: ShardSelection | Observable<ShardSelection>;
  /**
   * Objects per list page (default 500); 0 lists in one response. Either
   * way, and whether or not the server honours `limit`, the answer is
   * parsed as it streams in: no page is held whole.
   */
  pageSize?: number;
  /**
   * Only the objects' metadata: lists and watches ask for kube's
   * `PartialObjectMetadata` (client-go's metadata informer,
   * controller-runtime's `OnlyMetadata`, kube-rs's `metadata_watcher`), and
   * each object is `{ apiVersion: 'meta.k8s.io/v1', kind:
   * 'PartialObjectMetadata', metadata }`. Enough for owner mapping, labels
   * and names, at a fraction of the memory.
   */
  metadataOnly?: boolean;
  /**
   * Keep objects compact (the default, but for a `transform` other than
   * `dropManagedFields`; see docs/benchmarks.md,
   * "Memory of the read path"): each object is read from its
   * bytes without a whole `JSON.parse`; its `metadata` is decoded (nested
   * values shared between objects that have the same ones), the rest kept
   * as JSON text until it is read. Objects downstream are read-only views
   * that decode the rest when a field of it is read; a store hands readers
   * the decoded object, ordinary and frozen. A `transform` may change
   * `metadata` (`dropManagedFields` is done on the bytes), not the rest:
   * return a new object for that. `false` parses each object whole:
   * downstream code and readers get the parsed object itself (read-only by
   * contract, not frozen).
   */
  compact?: boolean;
  /**
   * The largest object kept, in bytes (default 128 MiB): a list item or
   * watch line larger than this is reported (logged at error, the
   * monitor's `skipped`) and skipped; the list or watch goes on.
   */
  maxObjectBytes?: number;
  /**
   * List through a watch with `sendInitialEvents=true` (Kubernetes 1.27+
   * with the WatchList feature): the server streams the objects instead of
   * building pages. A server that rejects it (400/422) is listed the usual
   * way from then on.
   */
  streamingList?: boolean;
  /**
   * Applied to every object as it arrives, before anything downstream (or
   * any store) holds it: drop what you never read. `dropManagedFields` is
   * the usual one. A transform that throws ends the source with its error.
   */
  transform?: (object: T) => T;
  /**
   * A watch that sends nothing (not even a bookmark) for this long is taken
   * for dead and reopened from the last resourceVersion (default 180 000 ms;
   * servers send bookmarks about once a minute). A list request that sends
   * nothing for this long is given up and retried.
   */
  idleTimeout?: number;
  /** The waits after failures (default 800 ms doubling to 30 s, full jitter, reset after 2 min without one). */
  backoff?: BackoffOptions;
  /** Where every wait and the clock come from (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
  /** Aborting it completes the source and cancels its requests. */
  signal?: AbortSignal;
  /** Where retries, re-lists and malformed lines are logged (default: pino to stderr). */
  logger?: Logger;
  /** Told of requests, events and failures, for metrics (`sourceMetrics()` fits). */
  monitor?: ListWatchMonitor;
  /** Told of every list and watch request sent and of its answer's status (`rest_client_*` metrics). */
  requests?: RequestObserver;
  /** For the watch timeout and backoff jitter; `Math.random` by default. */
  random?: () => number;
  /**
   * What a 404 of the list or the watch does, the resource type not served
   * (a CRD not installed yet, or deleted): `wait` empties the store
   * (`Restart`, then `Synced` with no resourceVersion: `deltas()` deletes
   * what was stored), says the source is failing through the monitor's
   * `status`, polls the server's discovery until the type is served, and
   * lists it again (see `whenServed`, docs/dynamic-watches.md); `fail` ends
   * the source with the `ListWatchError`. The default is `wait` for a group
   * with a dot in its name (`example.com`: one a CRD or an aggregated API
   * can add), `fail` for kube's own groups without one (the core group,
   * `apps`, `batch`: no CRD may add to them, so a type not served there is
   * a misspelt name, and fails at once, in the server's words).
   */
  notServed?: 'wait' | 'fail';
  /** With `notServed: 'wait'`: the pauses between discovery polls (default 1 s doubling to 30 s, jitter 0.5). */
  servedPoll?: BackoffOptions;
}

/**
 * Lists a resource, then watches it for as long as it is subscribed: the
 * job of client-go's Reflector, as an Observable of `ListWatchEvent`s.
 *
 * ```
 * ─Restart─Listed─Listed─…─Synced(rv)─Added─Modified─Bookmark─…─Restart─Listed─…─Synced─…
 *  └──── paged list, object by object ───┘└──── watch, reopened as needed ──┘└ after a 410 ┘
 * ```
 *
 * - The list is paged (`limit`, `continue`; 500 a page) and each object is
 *   emitted as its page arrives; list items get the `apiVersion` and `kind`
 *   that the server leaves off them. A page token the server has forgotten
 *   (410 on `continue`) restarts the list from the top.
 * - The watch asks for bookmarks and a random `timeoutSeconds` in 300–600,
 *   from the list's resourceVersion; each event moves the resourceVersion on.
 * - A watch the server closes cleanly is reopened at once from the last
 *   resourceVersion, without a list. A 410 Gone (as the response status or
 *   as an `ERROR` event) means that version is no longer in the server's
 *   history: the source lists again (`Restart`), and `deltas()` turns
 *   objects that vanished meanwhile into tombstones.
 * - Other failures (network errors, 5xx, 429, a dropped connection, a watch
 *   silent for longer than `idleTimeout`, a list as silent, a malformed line) back off, 800 ms
 *   doubling to 30 s with jitter, reset after 2 minutes without failure, and
 *   retry from where they were. A 429's `Retry-After` is waited out in full.
 * - 401 and 403 are retried with the same backoff (RBAC granted after the
 *   start, a rotated token; client-go and kube-rs do the same), each logged
 *   at warn with the verb, the resource and the server's message; the
 *   monitor's `status` says the source is failing until an answer comes.
 * - A watch answered 504 "too large resource version" (the server went
 *   back in time: restored from a backup, or a new server at the same
 *   address) lists again, as after a 410, so the store converges to the
 *   server's state; that, or a list whose version is lower than the last
 *   one, is logged once at warn.
 * - A list answer is parsed as it streams in, whatever its size and whether
 *   or not the server paginates; an object larger than `maxObjectBytes` is
 *   reported and skipped, and the rest goes on.
 * - A 404 (the resource type is not served: its CRD not installed yet, or
 *   deleted) empties the store and waits for the type, polling discovery,
 *   then lists it again (`notServed`, by default for a group with a dot in
 *   its name, as every CRD's; see `whenServed`).
 * - It errors only for faults no retry fixes: 400 (a bad selector), 404
 *   in kube's own groups (the core group, `apps`: a misspelt name) or with
 *   `notServed: 'fail'`, and the other statuses
 *   `isFatalStatus` names, a kubeconfig without a cluster, a transform that
 *   throws; with a `ListWatchError` naming the verb, the resource and the
 *   server's message.
 * - Unsubscribing (or aborting `signal`) aborts the open request at once;
 *   nothing is left to keep the process alive.
 *
 * Inside, it is a few named phases (`Phase` in `listWatchPhases.ts`) and
 * one `step` that performs a phase and returns the next, until `failed` or
 * `stopped`; requests and readers answer with values, and no exception
 * steers it. A transient failure is the arrow to `backoff`:
 *
 * ```
 *                  next page                        closed
 *                 ┌─────────┐                     ┌────────┐
 *                 ▼         │      last page      ▼        │
 *   start ──▶ list{reason, continue} ──Synced──▶ watch{resourceVersion}
 *                 │     ▲                          │     ▲
 *         failure │     │ from the first page,     │     │ from the last
 *                 │     │ or a list after a 410    │     │ resourceVersion
 *                 ▼     │                          ▼     │
 *                backoff{verb, reason, code, retryAfterSeconds, next}
 * ```
 *
 * - `list` sends one page request; without a `continue` token the list
 *   begins (`Restart`); the last page (`Synced`) leads to `watch`.
 * - `streamingList` takes the place of `list` when `streamingList` is set:
 *   once `Synced`, its response carries on as the watch; a server that
 *   answers it 400/422 is listed with `list` from then on.
 * - `watch`, after a clean close, is reopened at once from the last
 *   resourceVersion; after anything else, `backoff` first.
 * - `backoff` waits, then goes to `next`: the request that failed again (a
 *   list from its first page), or a list after a 410 Gone.
 * - Any phase ends in `failed` (the Observable errors with its
 *   `ListWatchError`) on a fault no retry fixes, and in `stopped` once
 *   unsubscribed or aborted.
 *
 * A monitor hook or logger that throws is a bug in it: thrown while a watch
 * response is read, it ends that watch, reopened after a backoff; thrown
 * anywhere else, the source errors with it.
 */
export function listWatch<T extends KubeObject = KubeObject>(
  kubeConfig: KubeConfig,
  resource: ResourceRef,
  options: ListWatchOptions<T> = {},
): Observable<ListWatchEvent<T>> {
  const logged = { ...options, logger: options.logger ?? defaultLogger({ part: 'listWatch' }) };
  const selection = options.shardSelector;
  const open = (): Observable<ListWatchEvent<T>> =>
    selection === undefined
      ? reflect(kubeConfig, resource, logged, undefined)
      : shardedListWatch<T>(selection, {
          resource: resourceName(resource),
          logger: logged.logger,
          monitor: options.monitor ?? {},
          signal: options.signal,
          source: (shard) => reflect(kubeConfig, resource, logged, shard),
        });
  if ((options.notServed ?? defaultNotServed(resource)) === 'fail') return open();
  return whenServed(open, {
    resource: resourceName(resource),
    probe: () => servedInDiscovery(kubeConfig, resource, options.requests),
    scheduler: options.scheduler ?? asyncScheduler,
    logger: logged.logger,
    signal: options.signal,
    ...(options.servedPoll !== undefined ? { poll: options.servedPoll } : {}),
    ...(options.monitor !== undefined ? { monitor: options.monitor } : {}),
    ...(options.random !== undefined ? { random: options.random } : {}),
  });
}

/**
 * `wait` where a type may yet be installed: a group whose name has a dot,
 * as every CRD's must (kube refuses a CRD whose group has none).
 */
function defaultNotServed(resource: ResourceRef): 'wait' | 'fail' {
  return (resource.group ?? '').includes('.') ? 'wait' : 'fail';
}

/** One list-watch of one (or no) shard: the Reflector over HTTP, for as long as it is subscribed. */
function reflect<T extends KubeObject>(
  kubeConfig: KubeConfig,
  resource: ResourceRef,
  options: ListWatchOptions<T>,
  shard: SourceShard | undefined,
): Observable<ListWatchEvent<T>> {
  return new Observable<ListWatchEvent<T>>((subscriber) => {
    const stop = new AbortController();
    const onOuterAbort = () => {
      stop.abort();
      subscriber.complete();
    };
    if (options.signal?.aborted) {
      subscriber.complete();
      return undefined;
    }
    options.signal?.addEventListener('abort', onOuterAbort, { once: true });
    const emit = (event: ListWatchEvent<T>) => {
      if (!subscriber.closed) subscriber.next(event);
    };
    const transport = (settings: TransportSettings) => httpTransport({ ...settings, kubeConfig, path: collectionPath(resource), signal: stop.signal, requests: options.requests });
    new Reflector(resource, options, emit, stop.signal, transport, shard).run().then(
      (end) => {
        if (end.kind === 'failed' && !subscriber.closed) subscriber.error(end.error);
      },
      // A bug (a monitor hook or logger that threw): the source ends with it rather than hide it.
      (err: unknown) => {
        if (!subscriber.closed) subscriber.error(err);
      },
    );
    return () => {
      options.signal?.removeEventListener('abort', onOuterAbort);
      stop.abort();
    };
  });
}
