import type { KubeConfig } from '@kubernetes/client-node';
import type { IncomingMessage } from 'node:http';
import { Observable, asyncScheduler, interval, type SchedulerLike, type Subscriber } from 'rxjs';
import { silentLogger, type Logger } from '../logger.js';
import { type KubeObject, type ListWatchEvent, collectionPath, describeResource, resourceName, type ResourceRef } from '../types.js';
import { Backoff, type BackoffOptions } from './backoff.js';
import { KubeConfigError, getStream, readBody, readFailure, type FailedResponse } from './http.js';
import { ListWatchError, explainStatus, isFatalStatus } from './listWatchError.js';
import { WatchLineReader, type MalformedWatchLineError, type WatchLine } from './watchLineReader.js';

/** Why a watch ended and was opened again. */
export type WatchRestartReason = 'closed' | 'expired' | 'dropped' | 'error' | 'idle' | 'malformed' | 'throttled';

/**
 * Hooks told of what the source does, for metrics and for tests. Every
 * method is optional; none may throw.
 */
export interface ListWatchMonitor {
  /** An HTTP request is about to be sent. */
  request?(verb: 'list' | 'watch', resource: string): void;
  /** A list begins: `initial`, or a re-list after `expired` history or a `continue-expired` page token. */
  relist?(resource: string, reason: 'initial' | 'expired' | 'continue-expired' | 'retry'): void;
  /** A watch ended and will be reopened. */
  watchRestart?(resource: string, reason: WatchRestartReason): void;
  /** One watch event arrived (`ADDED`, `MODIFIED`, `DELETED`, `BOOKMARK`, `ERROR`). */
  event?(resource: string, type: string): void;
  /** A watch line could not be read; the watch is reopened from the last good resourceVersion. */
  malformedLine?(resource: string, error: MalformedWatchLineError): void;
  /** After a failure, the source waits `delayMs` before trying `verb` again. */
  retry?(info: { resource: string; verb: 'list' | 'watch'; delayMs: number; reason: string; code?: number }): void;
}

export interface ListWatchOptions<T extends KubeObject> {
  labelSelector?: string;
  fieldSelector?: string;
  /** Objects per list page (default 500); 0 lists in one response. */
  pageSize?: number;
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
  backoff?: BackoffOptions;
  /** Where every wait and the clock come from (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
  /** Aborting it completes the source and cancels its requests. */
  signal?: AbortSignal;
  logger?: Logger;
  monitor?: ListWatchMonitor;
  /** For the watch timeout and backoff jitter; `Math.random` by default. */
  random?: () => number;
}

type WatchEnd =
  | { kind: 'closed' | 'idle' | 'dropped' | 'malformed' | 'aborted' }
  | { kind: 'expired'; message: string }
  | { kind: 'failed'; failure: FailedResponse };

/** A transient fault: back off, then try again. */
class Retryable extends Error {
  constructor(
    message: string,
    readonly code?: number,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

/** The longest delay a Node timer keeps (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

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
 * - It errors only for faults no retry fixes: 400 (a bad selector), 401,
 *   403, 404 (the resource type is not served), with a `ListWatchError`
 *   naming the verb, the resource and the server's message.
 * - Unsubscribing (or aborting `signal`) aborts the open request at once;
 *   nothing is left to keep the process alive.
 */
export function listWatch<T extends KubeObject = KubeObject>(
  kubeConfig: KubeConfig,
  resource: ResourceRef,
  options: ListWatchOptions<T> = {},
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
    new Reflector(kubeConfig, resource, options, subscriber, stop.signal).run().catch((err: unknown) => {
      if (!subscriber.closed) subscriber.error(err);
    });
    return () => {
      options.signal?.removeEventListener('abort', onOuterAbort);
      stop.abort();
    };
  });
}

class Reflector<T extends KubeObject> {
  private readonly name: string;
  private readonly path: string;
  private readonly scheduler: SchedulerLike;
  private readonly logger: Logger;
  private readonly monitor: ListWatchMonitor;
  private readonly random: () => number;
  private readonly backoff: Backoff;
  private readonly pageSize: number;
  private readonly idleTimeout: number;
  private streaming: boolean;
  /** The version to watch from; undefined until a list has completed. */
  private resourceVersion: string | undefined;

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly resource: ResourceRef,
    private readonly options: ListWatchOptions<T>,
    private readonly subscriber: Subscriber<ListWatchEvent<T>>,
    private readonly signal: AbortSignal,
  ) {
    this.name = resourceName(resource);
    this.path = collectionPath(resource);
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.logger = options.logger ?? silentLogger;
    this.monitor = options.monitor ?? {};
    this.random = options.random ?? Math.random;
    this.backoff = new Backoff(options.backoff ?? {}, this.scheduler, this.random);
    this.pageSize = options.pageSize ?? 500;
    this.idleTimeout = options.idleTimeout ?? 180_000;
    this.streaming = options.streamingList === true;
  }

  async run(): Promise<void> {
    let listReason: 'initial' | 'expired' | 'continue-expired' | 'retry' = 'initial';
    let verb: 'list' | 'watch' = 'list';
    while (!this.signal.aborted) {
      try {
        if (this.resourceVersion === undefined) {
          verb = 'list';
          this.monitor.relist?.(this.name, listReason);
          if (this.streaming) {
            const end = await this.watch(true);
            if (end.kind === 'failed' && (end.failure.code === 400 || end.failure.code === 422)) {
              this.logger.warn(
                { resource: this.name, code: end.failure.code, message: end.failure.message },
                'the server rejected a streaming list; listing page by page from now on',
              );
              this.streaming = false;
              continue;
            }
            listReason = await this.afterWatch(end, true);
            continue;
          }
          await this.list();
          listReason = 'retry';
        }
        verb = 'watch';
        listReason = await this.afterWatch(await this.watch(false), false);
      } catch (err) {
        if (this.signal.aborted) return;
        if (err instanceof ListWatchError) throw err;
        if (err instanceof ContinueExpired) {
          this.logger.info({ resource: this.name }, 'list page token expired (410); listing again from the start');
          listReason = 'continue-expired';
          await this.wait(verb, 'continue-expired', err);
          continue;
        }
        const retryable = err instanceof Retryable ? err : new Retryable(describeError(err));
        await this.wait(verb, retryable.message, retryable);
      }
    }
  }

  /** Decides what follows an ended watch; returns the reason for the next list, if one is needed. */
  private async afterWatch(end: WatchEnd, listing: boolean): Promise<'expired' | 'retry'> {
    switch (end.kind) {
      case 'aborted':
        return 'retry';
      case 'closed':
        this.monitor.watchRestart?.(this.name, 'closed');
        return 'retry';
      case 'expired':
        this.logger.info({ resource: this.name, message: end.message }, 'watch history expired (410); listing again');
        this.monitor.watchRestart?.(this.name, 'expired');
        this.resourceVersion = undefined;
        // A 410 right after a list would loop without a pause: go through the backoff.
        await this.wait('watch', 'expired', new Retryable(end.message, 410));
        return 'expired';
      case 'failed': {
        const { failure } = end;
        if (failure.code === 410) {
          return this.afterWatch({ kind: 'expired', message: failure.message }, listing);
        }
        this.fatalIfPermanent(failure, listing ? 'list' : 'watch');
        this.monitor.watchRestart?.(this.name, failure.code === 429 ? 'throttled' : 'error');
        throw new Retryable(`${failure.code} ${failure.reason}: ${failure.message}`, failure.code, failure.retryAfterSeconds);
      }
      default:
        this.monitor.watchRestart?.(this.name, end.kind);
        throw new Retryable(`watch ${end.kind}`);
    }
  }

  private fatalIfPermanent(failure: FailedResponse, verb: 'list' | 'watch'): void {
    if (!isFatalStatus(failure.code)) return;
    const selectors = [
      this.options.labelSelector ? `labelSelector "${this.options.labelSelector}"` : '',
      this.options.fieldSelector ? `fieldSelector "${this.options.fieldSelector}"` : '',
    ].filter(Boolean);
    throw new ListWatchError(
      `cannot ${verb} ${describeResource(this.resource)}${selectors.length ? ` with ${selectors.join(' and ')}` : ''}: ` +
        `${explainStatus(failure.code)} (${failure.code} ${failure.reason}: ${failure.message})`,
      failure.code,
      failure.reason,
      verb,
      this.name,
    );
  }

  private async wait(verb: 'list' | 'watch', reason: string, cause: Error): Promise<void> {
    const code = cause instanceof Retryable ? cause.code : undefined;
    const retryAfter = cause instanceof Retryable ? cause.retryAfterSeconds : undefined;
    const backoff = this.backoff.next();
    // A timer longer than Node's limit fires at once (with a warning): a huge Retry-After would become none.
    const delayMs = Math.min(MAX_TIMER_MS, retryAfter !== undefined ? Math.max(retryAfter * 1000, backoff) : backoff);
    this.logger.warn({ resource: this.name, verb, reason, code, delayMs }, `${verb} failed; retrying after a pause`);
    this.monitor.retry?.({ resource: this.name, verb, delayMs, reason, ...(code !== undefined ? { code } : {}) });
    await sleep(delayMs, this.scheduler, this.signal);
  }

  private emit(event: ListWatchEvent<T>): void {
    if (!this.subscriber.closed) this.subscriber.next(event);
  }

  private transform(object: T): T {
    const transform = this.options.transform;
    if (transform === undefined) return object;
    try {
      return transform(object);
    } catch (err) {
      const meta = object.metadata ?? {};
      throw new ListWatchError(
        `the transform of ${this.name} threw for ${meta.namespace ? `${meta.namespace}/` : ''}${meta.name ?? '(no name)'}: ${describeError(err)}`,
        0,
        'TransformFailed',
        'list',
        this.name,
      );
    }
  }

  private query(extra: Record<string, string>): URLSearchParams {
    const query = new URLSearchParams();
    if (this.options.labelSelector) query.set('labelSelector', this.options.labelSelector);
    if (this.options.fieldSelector) query.set('fieldSelector', this.options.fieldSelector);
    for (const [key, value] of Object.entries(extra)) query.set(key, value);
    return query;
  }

  /** A paged list: Restart, each object as Listed, then Synced. */
  private async list(): Promise<void> {
    this.emit({ type: 'Restart' });
    let token: string | undefined;
    for (;;) {
      const query = this.query(this.pageSize > 0 ? { limit: String(this.pageSize) } : {});
      if (token !== undefined) query.set('continue', token);
      this.monitor.request?.('list', this.name);
      const answer = await this.fetchPage(query);
      if ('failure' in answer) {
        const { failure } = answer;
        if (failure.code === 410 && token !== undefined) throw new ContinueExpired(failure.message);
        this.fatalIfPermanent(failure, 'list');
        throw new Retryable(`${failure.code} ${failure.reason}: ${failure.message}`, failure.code, failure.retryAfterSeconds);
      }
      const { body, truncated } = answer;
      if (truncated) throw new Retryable('list page larger than 64 MiB; lower pageSize');
      const page = parsePage(body, this.name);
      // Read defensively: a page with a mistyped kind or apiVersion still lists its items.
      const itemKind = typeof page.kind === 'string' && page.kind.endsWith('List') ? page.kind.slice(0, -4) : undefined;
      const apiVersion = typeof page.apiVersion === 'string' ? page.apiVersion : undefined;
      for (const entry of page.items) {
        if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
          // Nothing downstream could transform or key it; the rest of the page is still good.
          this.logger.error({ resource: this.name, item: JSON.stringify(entry)?.slice(0, 200) }, 'list item is not an object; skipping it');
          continue;
        }
        const item = entry as T;
        if (item.apiVersion === undefined && apiVersion !== undefined) item.apiVersion = apiVersion;
        if (item.kind === undefined && itemKind !== undefined) item.kind = itemKind;
        this.emit({ type: 'Listed', object: this.transform(item) });
        if (this.signal.aborted) return;
      }
      const next = page.metadata?.continue;
      if (typeof next === 'string' && next !== '') {
        token = next;
        continue;
      }
      const rv = page.metadata?.resourceVersion;
      if (typeof rv !== 'string' || rv === '') throw new Retryable('list response has no metadata.resourceVersion');
      this.resourceVersion = rv;
      this.emit({ type: 'Synced', resourceVersion: rv });
      return;
    }
  }

  /**
   * One list request, read whole. A response that sends nothing for
   * `idleTimeout` (a server or proxy stalled mid-answer) is given up and
   * retried, as a silent watch is; without that the source would wait for
   * ever. The request is not aborted once read, so its socket can be reused.
   */
  private async fetchPage(query: URLSearchParams): Promise<{ failure: FailedResponse } | { body: Buffer; truncated: boolean }> {
    const request = new AbortController();
    const onStop = () => request.abort();
    this.signal.addEventListener('abort', onStop, { once: true });
    const watchdog = this.idleWatchdog('list', () => request.abort());
    try {
      const response = await this.open(query, 'list', request.signal);
      watchdog.touch();
      if (response.statusCode !== 200) return { failure: await readFailure(response, watchdog.touch) };
      return await readBody(response, undefined, watchdog.touch);
    } catch (err) {
      if (watchdog.idle() && !this.signal.aborted) throw new Retryable(`list sent nothing for ${this.idleTimeout} ms`);
      throw err;
    } finally {
      watchdog.stop();
      this.signal.removeEventListener('abort', onStop);
    }
  }

  /**
   * Calls `onIdle` once nothing has been `touch`ed for `idleTimeout`.
   * Checked a few times per idle period rather than re-armed per chunk:
   * a busy watch gets thousands of chunks a second.
   */
  private idleWatchdog(verb: 'list' | 'watch', onIdle: () => void): { touch: () => void; idle: () => boolean; stop: () => void } {
    let lastActivity = this.scheduler.now();
    let idle = false;
    const check = interval(Math.max(1, this.idleTimeout / 4), this.scheduler).subscribe(() => {
      if (this.scheduler.now() - lastActivity < this.idleTimeout) return;
      this.logger.warn({ resource: this.name, idleTimeout: this.idleTimeout }, `${verb} silent for too long; ${verb === 'watch' ? 'reopening it' : 'retrying it'}`);
      idle = true;
      check.unsubscribe();
      onIdle();
    });
    return {
      touch: () => {
        lastActivity = this.scheduler.now();
      },
      idle: () => idle,
      stop: () => check.unsubscribe(),
    };
  }

  private async open(query: URLSearchParams, verb: 'list' | 'watch', requestAbort?: AbortSignal): Promise<IncomingMessage> {
    try {
      return await getStream(this.kubeConfig, this.path, query, requestAbort ?? this.signal);
    } catch (err) {
      if (err instanceof ListWatchError) throw err;
      if (err instanceof KubeConfigError) {
        throw new ListWatchError(`cannot ${verb} ${describeResource(this.resource)}: ${err.message}`, 0, 'BadKubeConfig', verb, this.name);
      }
      throw new Retryable(`${verb} request failed: ${describeError(err)}`);
    }
  }

  /**
   * One watch request, read to its end. With `listing`, it is a streaming
   * list: ADDED events up to the initial-events-end bookmark are the list.
   */
  private async watch(listing: boolean): Promise<WatchEnd> {
    const request = new AbortController();
    const onStop = () => request.abort();
    this.signal.addEventListener('abort', onStop, { once: true });
    const watchdog = this.idleWatchdog('watch', () => request.abort());
    try {
      const query = this.query({
        watch: '1',
        allowWatchBookmarks: 'true',
        timeoutSeconds: String(300 + Math.floor(this.random() * 301)),
      });
      if (listing) {
        query.set('sendInitialEvents', 'true');
        query.set('resourceVersionMatch', 'NotOlderThan');
        query.set('resourceVersion', '');
        this.emit({ type: 'Restart' });
      } else {
        query.set('resourceVersion', this.resourceVersion as string);
      }
      this.monitor.request?.('watch', this.name);
      let response: IncomingMessage;
      try {
        response = await this.open(query, 'watch', request.signal);
      } catch (err) {
        if (watchdog.idle()) return { kind: 'idle' };
        if (this.signal.aborted) return { kind: 'aborted' };
        throw err;
      }
      if (response.statusCode !== 200) return { kind: 'failed', failure: await readFailure(response) };
      return await this.readWatch(response, listing, request, { touch: watchdog.touch, wasIdle: watchdog.idle });
    } finally {
      watchdog.stop();
      this.signal.removeEventListener('abort', onStop);
      request.abort();
    }
  }

  /**
   * Reads one watch response to its end, emitting its events. Resolves with
   * why it ended; rejects only with a fatal error (a throwing transform).
   */
  private readWatch(
    response: IncomingMessage,
    listing: boolean,
    request: AbortController,
    activity: { touch(): void; wasIdle(): boolean },
  ): Promise<WatchEnd> {
    return new Promise<WatchEnd>((resolve, reject) => {
      let ended = false;
      let inList = listing;
      const finish = (end: WatchEnd | Error) => {
        if (ended) return;
        ended = true;
        // A streaming list cut short is not a list: it must start over.
        if (inList) this.resourceVersion = undefined;
        request.abort();
        if (end instanceof Error) reject(end);
        else resolve(end);
      };
      const onMalformed = (error: MalformedWatchLineError | MalformedLine) => {
        if (ended) return;
        this.logger.error(
          { resource: this.name, resourceVersion: this.resourceVersion, error: error.message },
          'malformed watch line; reopening the watch from the last good resourceVersion',
        );
        if ('text' in error) this.monitor.malformedLine?.(this.name, error);
        finish({ kind: 'malformed' });
      };
      const onEvent = (line: WatchLine) => {
        if (ended) return;
        this.monitor.event?.(this.name, line.type);
        const object = line.object as T;
        switch (line.type) {
          case 'ADDED':
          case 'MODIFIED':
          case 'DELETED': {
            if (inList) {
              if (line.type === 'ADDED') this.emit({ type: 'Listed', object: this.transform(object) });
              return;
            }
            const rv = object.metadata?.resourceVersion;
            const transformed = this.transform(object);
            if (typeof rv === 'string' && rv !== '') this.resourceVersion = rv;
            this.emit({ type: WATCH_TYPES[line.type], object: transformed });
            return;
          }
          case 'BOOKMARK': {
            const rv = object.metadata?.resourceVersion;
            if (typeof rv !== 'string' || rv === '') return onMalformed(new MalformedLine('bookmark without metadata.resourceVersion'));
            if (inList) {
              if (object.metadata.annotations?.[INITIAL_EVENTS_END] !== 'true') return;
              inList = false;
              this.resourceVersion = rv;
              this.emit({ type: 'Synced', resourceVersion: rv });
              return;
            }
            this.resourceVersion = rv;
            this.emit({ type: 'Bookmark', resourceVersion: rv });
            return;
          }
          case 'ERROR': {
            const status = line.object as { code?: unknown; reason?: unknown; message?: unknown };
            const code = typeof status.code === 'number' ? status.code : 500;
            const message = typeof status.message === 'string' ? status.message : 'watch ERROR event without a message';
            if (code === 410) return finish({ kind: 'expired', message });
            const reason = typeof status.reason === 'string' ? status.reason : 'Unknown';
            return finish({ kind: 'failed', failure: { code, reason, message, retryAfterSeconds: undefined } });
          }
          default:
            return onMalformed(new MalformedLine(`unknown event type "${line.type}"`));
        }
      };
      const reader = new WatchLineReader(onEvent, onMalformed);
      response.on('data', (chunk: Buffer) => {
        activity.touch();
        try {
          reader.push(chunk);
        } catch (err) {
          finish(err as Error);
        }
      });
      response.on('end', () => {
        try {
          reader.end();
        } catch (err) {
          finish(err as Error);
        }
        finish({ kind: 'closed' });
      });
      response.on('close', () => {
        if (activity.wasIdle()) finish({ kind: 'idle' });
        else if (this.signal.aborted) finish({ kind: 'aborted' });
        else finish({ kind: 'dropped' });
      });
      response.on('error', () => {
        // 'close' follows and says how it ended; the error is the dropped socket.
      });
    });
  }
}

const WATCH_TYPES = { ADDED: 'Added', MODIFIED: 'Modified', DELETED: 'Deleted' } as const;

class ContinueExpired extends Error {}

class MalformedLine extends Error {}

function parsePage(body: Buffer, name: string): { apiVersion?: string; kind?: string; metadata?: { continue?: string; resourceVersion?: string }; items: unknown[] } {
  let page: unknown;
  try {
    page = JSON.parse(body.toString('utf8'));
  } catch (err) {
    throw new Retryable(`list of ${name} answered with a body that is not JSON: ${(err as Error).message}`);
  }
  if (page === null || typeof page !== 'object' || !Array.isArray((page as { items?: unknown }).items)) {
    // A list with no items is sent as "items": [] or with items missing entirely.
    if (page !== null && typeof page === 'object' && (page as { items?: unknown }).items == null) {
      return { ...(page as object), items: [] };
    }
    throw new Retryable(`list of ${name} answered with something that is not a list`);
  }
  return page as { items: unknown[] };
}

function describeError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' ? `${err.message} (${code})` : err.message;
  }
  return String(err);
}

/** Waits on the scheduler; resolves early (without error) when `signal` aborts. */
function sleep(ms: number, scheduler: SchedulerLike, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const onAbort = () => {
      pending.unsubscribe();
      resolve();
    };
    const pending = scheduler.schedule(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
