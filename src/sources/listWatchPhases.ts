import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { silentLogger, type Logger } from '../logger.js';
import type { KubeObject, ListWatchEvent } from '../types.js';
import { Backoff } from './backoff.js';
import type { FailedResponse } from './http.js';
import type { ListWatchMonitor, ListWatchOptions } from './listWatch.js';
import type { ListWatchError } from './listWatchError.js';
import { fatalStatusError, kubeConfigError } from './listWatchFaults.js';
import { MAX_OBJECT_BYTES } from './listBodyParser.js';
import { ListItems } from './listItems.js';
import { compactCodec } from './sourceCodec.js';
import { MetadataInterner } from '../compact/metadataInterner.js';
import { dropManagedFields } from './transforms.js';
import type { ListPage, ListWatchTransport, TransportSettings, WatchEnd } from './listWatchTransport.js';
import { describeResource, resourceName, type ResourceRef } from '../types.js';
import { explainStatus } from './listWatchError.js';
import { delay } from '../util/wait.js';
import { WatchEvents, type WatchEventSink } from './watchEvents.js';
import type { SourceShard } from './sourceShard.js';

/**
 * Why a list begins: the first one, history expired (410), a page token
 * expired, or (`retry`) a streaming list the server closed before its end.
 * A list tried again after a failure keeps the reason it began with.
 */
export type ListReason = 'initial' | 'expired' | 'continue-expired' | 'retry';

/** A phase that sends a request. */
export type RequestPhase =
  /** One page of a paged list; without `continue` (the page token), the list begins with a `Restart`. */
  | { kind: 'list'; reason: ListReason; continue?: string }
  /** A list through a watch with `sendInitialEvents=true`; the same response carries on as the watch. */
  | { kind: 'streamingList'; reason: ListReason }
  /** A watch from `resourceVersion`. */
  | { kind: 'watch'; resourceVersion: string };

/** Where a list-watch is; `step` performs one phase and returns the next. */
export type Phase =
  | RequestPhase
  /** Waiting before trying `verb` again (as `next`), after the failure `reason` (HTTP `code`, `Retry-After`). */
  | { kind: 'backoff'; verb: 'list' | 'watch'; reason: string; code?: number; retryAfterSeconds?: number; next: RequestPhase }
  /** A fault no retry fixes: the source errors with `error`. */
  | { kind: 'failed'; error: ListWatchError }
  /** Unsubscribed or aborted: the source is done. */
  | { kind: 'stopped' };

export type TerminalPhase = Extract<Phase, { kind: 'failed' | 'stopped' }>;

const STOPPED: TerminalPhase = { kind: 'stopped' };

/**
 * What a metadata-only source asks for: kube's `PartialObjectMetadata`
 * negotiation, with plain JSON as the fallback a server without it answers.
 */
const METADATA_ACCEPT = {
  list: 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json',
  watch: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json',
};

/** The longest delay a Node timer keeps (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * The phases of one list-watch and the `step` between them (see `listWatch`
 * for the diagram): the job of client-go's Reflector, as kube-rs's
 * `watcher` writes it, one named state and one step function. What it
 * keeps besides the phase: the backoff's count, and whether lists still
 * go through a streaming watch (until the server rejects one).
 */
export class Reflector<T extends KubeObject> {
  private readonly name: string;
  private readonly scheduler: SchedulerLike;
  private readonly logger: Logger;
  private readonly monitor: ListWatchMonitor;
  private readonly random: () => number;
  private readonly backoff: Backoff;
  private readonly pageSize: number;
  private readonly transport: ListWatchTransport;
  private readonly sink: WatchEventSink<T>;
  /** Lists go through a streaming watch: the option, until a server rejects one (400/422). */
  private streamingList: boolean;
  private readonly metadataOnly: boolean;
  /** The version of the last complete list, for the went-back-in-time warning only. */
  private lastListVersion: string | undefined;
  private warnedBack = false;
  /** Since the last failure, no request has been answered. */
  private failing = false;

  constructor(
    private readonly resource: ResourceRef,
    private readonly options: ListWatchOptions<T>,
    private readonly emit: (event: ListWatchEvent<T>) => void,
    private readonly signal: AbortSignal,
    transport: (settings: TransportSettings) => ListWatchTransport,
    /** The share read (`shardSelector`): sent on every request, and matched here when the server does not. */
    private readonly shard?: SourceShard,
  ) {
    this.name = resourceName(resource);
    this.scheduler = options.scheduler ?? asyncScheduler;
    this.logger = options.logger ?? silentLogger;
    this.monitor = options.monitor ?? {};
    this.random = options.random ?? Math.random;
    this.backoff = new Backoff(options.backoff ?? {}, this.scheduler, this.random);
    this.pageSize = options.pageSize ?? 500;
    this.streamingList = options.streamingList === true;
    this.metadataOnly = options.metadataOnly === true;
    const idleTimeout = options.idleTimeout ?? 180_000;
    const maxObjectBytes = options.maxObjectBytes ?? MAX_OBJECT_BYTES;
    if (typeof maxObjectBytes !== 'number' || !(maxObjectBytes > 0)) {
      throw new RangeError(`listWatch of ${this.name}: maxObjectBytes must be a positive number of bytes, got ${String(maxObjectBytes)}`);
    }
    // Compact unless told, but for a transform of the caller's own, which may rewrite what a compact view refuses
    // to change (its body, metadata's nested values).
    const compact = options.compact ?? (options.transform === undefined || options.transform === dropManagedFields);
    this.transport = transport({
      resource: this.name,
      scheduler: this.scheduler,
      logger: this.logger,
      idleTimeout,
      maxObjectBytes,
      ...(this.metadataOnly ? { accept: METADATA_ACCEPT } : {}),
      ...(compact ? { codec: compactCodec(options.transform) } : {}),
    });
    this.sink = {
      resource: this.name,
      logger: this.logger,
      monitor: this.monitor,
      transform: options.transform,
      metadataOnly: this.metadataOnly,
      // A compact source shares its metadata values in its codec, and its objects are views that take no writes.
      interner: this.metadataOnly && !compact ? new MetadataInterner() : undefined,
      emit,
      opened: () => this.healthy(),
      shard,
    };
  }

  /** Steps from the first list until the source fails or is stopped. */
  async run(): Promise<TerminalPhase> {
    let phase: Phase = this.startList('initial');
    while (phase.kind !== 'failed' && phase.kind !== 'stopped') phase = await this.step(phase);
    return phase;
  }

  /** Performs one phase and returns the next; nothing it meets is thrown, only a bug (a hook that throws). */
  async step(phase: Exclude<Phase, TerminalPhase>): Promise<Phase> {
    if (this.signal.aborted) return STOPPED;
    switch (phase.kind) {
      case 'list':
        return this.listPage(phase);
      case 'streamingList':
        return this.streamList(phase);
      case 'watch':
        return this.watch(phase);
      case 'backoff':
        return this.wait(phase);
    }
  }

  /** A list, paged or streamed, whichever this server takes. */
  private startList(reason: ListReason): RequestPhase {
    return this.streamingList ? { kind: 'streamingList', reason } : { kind: 'list', reason };
  }

  /** One list page: the first begins the list (`Restart`), each object is emitted as it arrives, the last ends it (`Synced`) and the watch follows. */
  private async listPage(phase: Extract<Phase, { kind: 'list' }>): Promise<Phase> {
    const token = phase.continue;
    if (token === undefined) {
      this.monitor.relist?.(this.name, phase.reason);
      this.emit({ type: 'Restart' });
    }
    const query = this.query(this.pageSize > 0 ? { limit: String(this.pageSize) } : {});
    if (token !== undefined) query.set('continue', token);
    this.monitor.request?.('list', this.name);
    const items = new ListItems<T>(this.sink, this.signal);
    const answer = await this.transport.listPage(query, items);
    // Any failure lists again from the top, for the same reason.
    const again: RequestPhase = { kind: 'list', reason: phase.reason };
    switch (answer.kind) {
      case 'ok':
        this.healthy();
        return this.listed(answer.page, phase.reason);
      case 'stopped':
        return items.fatal !== undefined ? { kind: 'failed', error: items.fatal } : STOPPED;
      case 'failed':
        if (answer.failure.code === 410 && token !== undefined) {
          this.logger.info({ resource: this.name }, 'list page token expired (410); listing again from the start');
          return { kind: 'backoff', verb: 'list', reason: 'continue-expired', next: { kind: 'list', reason: 'continue-expired' } };
        }
        return this.failedStatus(answer.failure, 'list', again);
      case 'error':
        return { kind: 'backoff', verb: 'list', reason: answer.reason, next: again };
      case 'misconfigured':
        return { kind: 'failed', error: kubeConfigError(answer.message, 'list', this.resource) };
      case 'aborted':
        return STOPPED;
    }
  }

  /** A page's end: the next page, or (the last) `Synced` and the watch. */
  private listed(page: ListPage, reason: ListReason): Phase {
    if (this.signal.aborted) return STOPPED;
    this.shard?.listed(page.metadata);
    const next = page.metadata?.continue;
    if (typeof next === 'string' && next !== '') return { kind: 'list', reason, continue: next };
    const rv = page.metadata?.resourceVersion;
    if (typeof rv !== 'string' || rv === '') {
      return { kind: 'backoff', verb: 'list', reason: 'list response has no metadata.resourceVersion', next: { kind: 'list', reason } };
    }
    this.noteListVersion(rv);
    this.emit({ type: 'Synced', resourceVersion: rv });
    return { kind: 'watch', resourceVersion: rv };
  }

  /**
   * Resource versions are opaque and compared for equality only, except
   * for this one warning: a list whose version, read as a number, is lower
   * than the last one listed means the server went back in time.
   */
  private noteListVersion(rv: string): void {
    const before = this.lastListVersion;
    this.lastListVersion = rv;
    if (before === undefined || !/^\d+$/.test(before) || !/^\d+$/.test(rv)) return;
    if (BigInt(rv) < BigInt(before)) this.wentBack(`list at resourceVersion ${rv}, after one at ${before}`);
  }

  /** The server's resourceVersion went backwards (a restore, or a new server on the same address): said once at warn. */
  private wentBack(detail: string): void {
    const fields = { resource: this.name, detail };
    const message = "the server's resourceVersion went backwards (restored from a backup, or a new server at the same address?); listing again";
    if (this.warnedBack) this.logger.info(fields, message);
    else this.logger.warn(fields, message);
    this.warnedBack = true;
  }

  /** A streaming list; a server that rejects it (400/422) is listed page by page from now on. */
  private async streamList(phase: Extract<Phase, { kind: 'streamingList' }>): Promise<Phase> {
    this.monitor.relist?.(this.name, phase.reason);
    this.shard?.listed(undefined);
    const events = new WatchEvents(this.sink, true, undefined);
    const end = await this.openWatch(events, undefined);
    if (end.kind === 'failed' && (end.failure.code === 400 || end.failure.code === 422)) {
      this.logger.warn(
        { resource: this.name, code: end.failure.code, message: end.failure.message },
        'the server rejected a streaming list; listing page by page from now on',
      );
      this.streamingList = false;
      return events.resourceVersion !== undefined ? { kind: 'watch', resourceVersion: events.resourceVersion } : { kind: 'list', reason: phase.reason };
    }
    return this.afterWatch(end, 'list', events.resourceVersion, phase.reason);
  }

  private async watch(phase: Extract<Phase, { kind: 'watch' }>): Promise<Phase> {
    const events = new WatchEvents(this.sink, false, phase.resourceVersion);
    const end = await this.openWatch(events, phase.resourceVersion);
    return this.afterWatch(end, 'watch', events.resourceVersion ?? phase.resourceVersion, 'retry');
  }

  /** Sends a watch from `resourceVersion`, or a streaming list (`Restart`) without one, and reads it to its end. */
  private openWatch(events: WatchEvents<T>, resourceVersion: string | undefined): Promise<WatchEnd> {
    const query = this.query({
      watch: '1',
      allowWatchBookmarks: 'true',
      timeoutSeconds: String(300 + Math.floor(this.random() * 301)),
    });
    if (resourceVersion === undefined) {
      query.set('sendInitialEvents', 'true');
      query.set('resourceVersionMatch', 'NotOlderThan');
      query.set('resourceVersion', '');
      this.emit({ type: 'Restart' });
    } else {
      query.set('resourceVersion', resourceVersion);
    }
    this.monitor.request?.('watch', this.name);
    return this.transport.watch(query, events);
  }

  /**
   * What follows a watch that ended: reopened from `resourceVersion` (or, a
   * streaming list cut short, listed again), at once after a clean close,
   * after a backoff otherwise; a re-list after a 410; the end for a fault no
   * retry fixes. `verb` is what the failure is counted as; `listReason`, why
   * a list that is tried again began.
   */
  private afterWatch(end: WatchEnd, verb: 'list' | 'watch', resourceVersion: string | undefined, listReason: ListReason): Phase {
    const resume = (reason: ListReason): RequestPhase =>
      resourceVersion !== undefined ? { kind: 'watch', resourceVersion } : this.startList(reason);
    switch (end.kind) {
      case 'closed':
        this.monitor.watchRestart?.(this.name, 'closed');
        return resume('retry');
      case 'expired':
        return this.expired(end.message);
      case 'failed': {
        if (end.failure.code === 410) return this.expired(end.failure.message);
        if (end.failure.tooLargeResourceVersion === true) return this.tooLarge(end.failure.message);
        const next = this.failedStatus(end.failure, verb, resume(listReason));
        if (next.kind === 'backoff') this.monitor.watchRestart?.(this.name, end.failure.code === 429 ? 'throttled' : 'error');
        return next;
      }
      case 'idle':
      case 'dropped':
      case 'malformed':
        this.monitor.watchRestart?.(this.name, end.kind);
        return { kind: 'backoff', verb, reason: `watch ${end.kind}`, next: resume(listReason) };
      case 'error':
        return { kind: 'backoff', verb, reason: end.reason, next: resume(listReason) };
      case 'misconfigured':
        return { kind: 'failed', error: kubeConfigError(end.message, 'watch', this.resource) };
      case 'fatal':
        return { kind: 'failed', error: end.error };
      case 'aborted':
        return STOPPED;
    }
  }

  /** History expired (410): list again, through the backoff (a 410 right after a list would loop without a pause). */
  private expired(message: string): Phase {
    this.logger.info({ resource: this.name, message }, 'watch history expired (410); listing again');
    this.monitor.watchRestart?.(this.name, 'expired');
    return { kind: 'backoff', verb: 'watch', reason: 'expired', code: 410, next: this.startList('expired') };
  }

  /**
   * A watch from a version newer than the server's (504, client-go's
   * "too large resource version"): the server went back in time, so its
   * history will never reach that version; list again, as client-go does,
   * so the store converges to what the server holds now.
   */
  private tooLarge(message: string): Phase {
    this.wentBack(message);
    this.monitor.watchRestart?.(this.name, 'expired');
    return { kind: 'backoff', verb: 'watch', reason: 'too large resource version', code: 504, next: this.startList('expired') };
  }

  /** A status other than 200: the end if no retry fixes it, else a backoff (honouring `Retry-After`) before `next`. */
  private failedStatus(failure: FailedResponse, verb: 'list' | 'watch', next: RequestPhase): Phase {
    const { labelSelector, fieldSelector } = this.options;
    const fatal = fatalStatusError(failure, verb, this.resource, { labelSelector, fieldSelector, shardSelector: this.shard?.shard.text });
    if (fatal !== undefined) return { kind: 'failed', error: fatal };
    if (failure.code === 401 || failure.code === 403) {
      // RBAC applied after start, or a token being rotated: client-go and kube-rs wait and try again.
      this.logger.warn(
        { resource: this.name, verb, code: failure.code, message: failure.message },
        `${verb} of ${describeResource(this.resource)} ${failure.code === 401 ? 'unauthorized' : 'forbidden'}: ${explainStatus(failure.code)}; retrying with backoff`,
      );
    }
    const reason = `${failure.code} ${failure.reason}: ${failure.message}`;
    return { kind: 'backoff', verb, reason, code: failure.code, retryAfterSeconds: failure.retryAfterSeconds, next };
  }

  /** Waits out a backoff: 800 ms doubling to 30 s with jitter, or a longer `Retry-After`. */
  private async wait(phase: Extract<Phase, { kind: 'backoff' }>): Promise<Phase> {
    const { verb, reason, code, retryAfterSeconds } = phase;
    const backoff = this.backoff.next();
    // A timer longer than Node's limit fires at once (with a warning): a huge Retry-After would become none.
    const delayMs = Math.min(MAX_TIMER_MS, retryAfterSeconds !== undefined ? Math.max(retryAfterSeconds * 1000, backoff) : backoff);
    this.logger.warn({ resource: this.name, verb, reason, code, delayMs }, `${verb} failed; retrying after a pause`);
    this.monitor.retry?.({ resource: this.name, verb, delayMs, reason, ...(code !== undefined ? { code } : {}) });
    // A 410 is the routine end of a watch's history, not a failure.
    if (!this.failing && reason !== 'expired' && reason !== 'continue-expired') {
      this.failing = true;
      this.monitor.status?.(this.name, { healthy: false, verb, reason, ...(code !== undefined ? { code } : {}) });
    }
    // An abort ends the wait early; the phase after it is then `stopped`.
    await delay(delayMs, this.scheduler, this.signal).catch(() => undefined);
    return this.signal.aborted ? STOPPED : phase.next;
  }

  /** A request was answered: a source that was failing is healthy again. */
  private healthy(): void {
    if (!this.failing) return;
    this.failing = false;
    this.monitor.status?.(this.name, { healthy: true });
  }

  private query(extra: Record<string, string>): URLSearchParams {
    const query = new URLSearchParams();
    if (this.options.labelSelector) query.set('labelSelector', this.options.labelSelector);
    if (this.options.fieldSelector) query.set('fieldSelector', this.options.fieldSelector);
    if (this.shard !== undefined) query.set('shardSelector', this.shard.shard.text);
    for (const [key, value] of Object.entries(extra)) query.set(key, value);
    return query;
  }
}
