import type { EventEntry, InformerEntry, QueueEntry, RunCause, RunEndEntry, RunStartEntry, TimelineEntry, TriggerCause, TriggerEntry, WriteEntry } from '../timeline.js';
import type { KubeObject, ObjectKey } from '../../types.js';
import { isSecretResource, redactSecrets } from '../redactSecrets.js';

/**
 * How much the live view keeps. Memory is bounded by
 * `maxKeys × (runsPerKey + historyPerKey)` small records, whatever the
 * number of keys ever seen or the length of the run.
 */
export interface LiveModelLimits {
  /** Keys kept, the least recently active dropped first (default 10 000). */
  readonly maxKeys: number;
  /** Runs kept per key, newest last (default 10). */
  readonly runsPerKey: number;
  /** Timeline entries kept per key for its detail, newest last (default 30). */
  readonly historyPerKey: number;
}

/** The defaults of `LiveModelLimits`. */
export const defaultLiveModelLimits: LiveModelLimits = Object.freeze({ maxKeys: 10_000, runsPerKey: 10, historyPerKey: 30 });

export type { RunCause } from '../timeline.js';

/** One run of a key, as the live view shows it. */
export interface LiveRunRecord {
  startedAt: number;
  attempt: number;
  cause?: RunCause;
  /** Triggers that coalesced into this run (at least 1 when `cause` is a trigger). */
  triggers: number;
  endedAt?: number;
  duration?: number;
  result?: RunEndEntry['result'];
  error?: string;
  requeueAfter?: number;
  /** When the queue said the next run comes due (a retry or requeue after this one). */
  nextRunAt?: number;
  /** The run's OpenTelemetry trace ID, when the controller traces its runs (docs/tracing.md). */
  traceId?: string;
  writes: number;
  events: number;
}

/** Where a key is: a queue entry's state, or `running` from its `run-start` to its next move. */
export type KeyState = QueueEntry['state'] | 'running';

/** What a key's row in the list shows. */
export interface KeySummary {
  key: ObjectKey;
  state: KeyState;
  /** When it entered `state`. */
  since: number;
  /** Scheduler time of the key's last timeline entry. */
  at: number;
  attempt: number;
  /** Runs seen in all (not only those kept). */
  runs: number;
  result?: RunEndEntry['result'];
  duration?: number;
  error?: string;
  /** When a delayed key comes due, and why it was delayed. */
  nextRunAt?: number;
  delayReason?: QueueEntry['reason'];
  /** The kept runs' results, oldest first, one letter each: s(uccess) e(rror) r(equeue) a(fter) d(ropped) ·(running). */
  recent: string;
}

/** One informer (a store of the controller), as the live view shows it. */
export interface InformerSummary {
  resource: string;
  synced: boolean;
  /** Objects in its store (from the store itself when the view has read access, else counted from the events). */
  objects: number;
  resourceVersion?: string;
  /** Lists started in all; relists are `lists - 1`. */
  lists: number;
  relists: number;
  failures: number;
  lastError?: string;
  lastErrorAt?: number;
  at?: number;
}

/** The workqueue at a glance. */
export interface QueueSummary {
  /** Keys waiting for a worker (`workqueue_depth`). */
  depth: number;
  running: number;
  delayed: number;
  /** Ms the longest-waiting key has waited; 0 when none waits. */
  longestWait: number;
  longestWaiting?: ObjectKey;
}

/** Everything the page needs on connect. */
export interface LiveSnapshot {
  controller?: string;
  now: number;
  leading?: boolean;
  identity?: string;
  queue: QueueSummary;
  informers: InformerSummary[];
  keys: KeySummary[];
  limits: LiveModelLimits;
  /** Entries folded since the view started. */
  entries: number;
  /** Set once the timeline ended: why. */
  ended?: string;
}

/** What changed since the last delta: replaced summaries (not increments), so applying one twice is harmless. */
export interface LiveDelta {
  now: number;
  controller?: string;
  leading?: boolean;
  identity?: string;
  queue: QueueSummary;
  informers: InformerSummary[];
  keys: KeySummary[];
  /** Keys dropped to stay within `maxKeys`. */
  removed: ObjectKey[];
  entries: number;
  ended?: string;
}

/** A timeline entry kept for a key's detail (writes without their answer's body). */
export type HistoryEntry = TriggerEntry | QueueEntry | RunStartEntry | RunEndEntry | Omit<WriteEntry, 'body'> | EventEntry;

/** A key's detail: its summary, kept runs and history, and its object as the cache holds it now. */
export interface KeyDetail {
  summary: KeySummary;
  runs: LiveRunRecord[];
  history: HistoryEntry[];
  /** Whether the cache holds an object under the key (undefined: the view has no read access to the cache). */
  cached?: boolean;
  object?: KubeObject;
}

/** Read access to a controller's stores, as much as the live view needs. */
export type LiveViewStores = Readonly<Record<string, { readonly size: number; get(key: ObjectKey): KubeObject | undefined }>>;

interface KeyRecord {
  readonly key: ObjectKey;
  state: KeyState;
  since: number;
  at: number;
  attempt: number;
  runCount: number;
  runs: LiveRunRecord[];
  history: HistoryEntry[];
  /** The last trigger since the last run started, and how many came. */
  pending?: { cause: TriggerCause; count: number };
  nextRunAt?: number;
  delayReason?: QueueEntry['reason'];
}

interface InformerRecord {
  summary: InformerSummary;
  /** Objects listed by the list under way (counted, for a view without read access). */
  listing: number;
}

const letters: Record<RunEndEntry['result'], string> = { success: 's', error: 'e', requeue: 'r', requeue_after: 'a', dropped: 'd' };

function pushCapped<T>(list: T[], item: T, cap: number): void {
  list.push(item);
  while (list.length > cap) list.shift();
}

/**
 * The live view's model: a fold of a controller's timeline into what the
 * page shows. One `apply` per entry, O(1) each (amortized); entry types it
 * does not know are ignored.
 *
 * Invariants: `waiting`, `running` and `delayed` hold exactly the keys whose
 * last move said so (a queue entry, or a `run-start` for running; disjoint); they are kept apart from the key
 * records, so dropping a record to stay within `maxKeys` never falsifies
 * the queue's figures. `records` is in least-recently-active order.
 */
export class LiveModel {
  readonly limits: LiveModelLimits;
  private readonly records = new Map<ObjectKey, KeyRecord>();
  private readonly informers = new Map<string, InformerRecord>();
  /** Waiting keys and since when, oldest first (a key re-entering goes last). */
  private readonly waiting = new Map<ObjectKey, number>();
  private readonly running = new Set<ObjectKey>();
  private readonly delayed = new Set<ObjectKey>();
  private readonly dirtyKeys = new Set<ObjectKey>();
  private readonly dirtyInformers = new Set<string>();
  private readonly removed = new Set<ObjectKey>();
  private dirtyController = false;
  private controller: string | undefined;
  private leading: boolean | undefined;
  private identity: string | undefined;
  private entries = 0;
  private ended: string | undefined;

  constructor(
    limits: Partial<LiveModelLimits> = {},
    private readonly stores: LiveViewStores | undefined = undefined,
  ) {
    this.limits = { ...defaultLiveModelLimits, ...limits };
    for (const [name, value] of Object.entries(this.limits)) {
      if (!Number.isInteger(value) || value < 1) throw new RangeError(`live view: limits.${name} must be a positive integer, got ${String(value)}`);
    }
  }

  /** Folds one entry in. */
  apply(entry: TimelineEntry): void {
    this.entries++;
    if (this.controller === undefined && typeof entry.controller === 'string') {
      this.controller = entry.controller;
      this.dirtyController = true;
    }
    switch (entry.type) {
      case 'informer':
        return this.informer(entry);
      case 'trigger':
        return this.trigger(entry);
      case 'queue':
        return this.queue(entry);
      case 'run-start':
        return this.runStart(entry);
      case 'run-end':
        return this.runEnd(entry);
      case 'write':
        return this.countInRun(entry, 'writes');
      case 'event':
        return this.countInRun(entry, 'events');
      case 'leadership':
        this.leading = entry.leading;
        this.identity = entry.identity;
        this.dirtyController = true;
        return;
      default:
        // A type added after this reader was written: ignored, as the timeline's contract asks.
        return;
    }
  }

  /** The timeline ended (completed, or failed: `why` says). */
  end(why: string): void {
    this.ended = why;
    this.dirtyController = true;
  }

  /** Everything, for a page that just connected. */
  snapshot(now: number): LiveSnapshot {
    return {
      ...(this.controller !== undefined ? { controller: this.controller } : {}),
      now,
      ...(this.leading !== undefined ? { leading: this.leading } : {}),
      ...(this.identity !== undefined ? { identity: this.identity } : {}),
      queue: this.queueSummary(now),
      informers: [...this.informers.values()].map((i) => this.informerSummary(i)),
      keys: [...this.records.values()].map(summarize),
      limits: this.limits,
      entries: this.entries,
      ...(this.ended !== undefined ? { ended: this.ended } : {}),
    };
  }

  /** What changed since the last call (undefined when nothing did), and starts over. */
  takeDelta(now: number): LiveDelta | undefined {
    if (this.dirtyKeys.size === 0 && this.dirtyInformers.size === 0 && this.removed.size === 0 && !this.dirtyController && this.waiting.size === 0) return undefined;
    const keys: KeySummary[] = [];
    for (const key of this.dirtyKeys) {
      const record = this.records.get(key);
      if (record !== undefined) keys.push(summarize(record));
    }
    const informers: InformerSummary[] = [];
    for (const name of this.dirtyInformers) {
      const record = this.informers.get(name);
      if (record !== undefined) informers.push(this.informerSummary(record));
    }
    const delta: LiveDelta = {
      now,
      ...(this.dirtyController && this.controller !== undefined ? { controller: this.controller } : {}),
      ...(this.dirtyController && this.leading !== undefined ? { leading: this.leading } : {}),
      ...(this.dirtyController && this.identity !== undefined ? { identity: this.identity } : {}),
      queue: this.queueSummary(now),
      informers,
      keys,
      removed: [...this.removed],
      entries: this.entries,
      ...(this.ended !== undefined ? { ended: this.ended } : {}),
    };
    this.dirtyKeys.clear();
    this.dirtyInformers.clear();
    this.removed.clear();
    this.dirtyController = false;
    return delta;
  }

  /** A key's detail; undefined for a key the view does not hold (never seen, or dropped). A Secret's values read `(redacted)`, as in a recording. */
  detail(key: ObjectKey, primary: string | undefined): KeyDetail | undefined {
    const record = this.records.get(key);
    if (record === undefined) return undefined;
    const store = primary === undefined ? undefined : this.stores?.[primary];
    const cached = store?.get(key);
    // A store of Secrets holds objects without a kind when they came in a list: its name says what they are.
    const object = cached === undefined ? undefined : (redactSecrets(cached, isSecretResource(primary as string)) as KubeObject);
    return {
      summary: summarize(record),
      runs: record.runs.map((run) => ({ ...run })),
      history: [...record.history],
      ...(store !== undefined ? { cached: object !== undefined } : {}),
      ...(object !== undefined ? { object } : {}),
    };
  }

  /** How many keys the view holds. */
  get size(): number {
    return this.records.size;
  }

  private record(key: ObjectKey, at: number): KeyRecord {
    let record = this.records.get(key);
    if (record === undefined) {
      record = { key, state: 'idle', since: at, at, attempt: 0, runCount: 0, runs: [], history: [] };
      this.removed.delete(key);
    } else {
      // Least recently active first: a touched key moves to the end.
      this.records.delete(key);
    }
    record.at = at;
    this.records.set(key, record);
    this.dirtyKeys.add(key);
    if (this.records.size > this.limits.maxKeys) {
      const oldest = this.records.keys().next().value as ObjectKey;
      this.records.delete(oldest);
      this.dirtyKeys.delete(oldest);
      this.removed.add(oldest);
    }
    return record;
  }

  private remember(record: KeyRecord, entry: HistoryEntry): void {
    pushCapped(record.history, entry, this.limits.historyPerKey);
  }

  private informer(entry: InformerEntry): void {
    let record = this.informers.get(entry.resource);
    if (record === undefined) {
      record = { summary: { resource: entry.resource, synced: false, objects: 0, lists: 0, relists: 0, failures: 0 }, listing: 0 };
      this.informers.set(entry.resource, record);
    }
    const s = record.summary;
    s.at = entry.at;
    if (entry.resourceVersion !== undefined) s.resourceVersion = entry.resourceVersion;
    else if (entry.object?.metadata?.resourceVersion !== undefined) s.resourceVersion = entry.object.metadata.resourceVersion;
    switch (entry.event) {
      case 'Restart':
        s.lists++;
        s.relists = Math.max(0, s.lists - 1);
        record.listing = 0;
        break;
      case 'Listed':
        record.listing++;
        break;
      case 'Synced':
        s.synced = true;
        s.objects = record.listing;
        break;
      case 'Added':
        s.objects++;
        break;
      case 'Deleted':
        s.objects = Math.max(0, s.objects - 1);
        break;
      case 'Failure':
        s.failures++;
        s.lastError = entry.error ?? 'failed (no message)';
        s.lastErrorAt = entry.at;
        break;
      default:
        break;
    }
    this.dirtyInformers.add(entry.resource);
  }

  private trigger(entry: TriggerEntry): void {
    const record = this.record(entry.key, entry.at);
    record.pending = { cause: entry.cause, count: (record.pending?.count ?? 0) + 1 };
    this.remember(record, entry);
  }

  private queue(entry: QueueEntry): void {
    const { key, state, at } = entry;
    const record = this.move(key, state, at);
    if (state === 'delayed') {
      record.nextRunAt = at + (entry.delay ?? 0);
      if (entry.reason !== undefined) record.delayReason = entry.reason;
      else delete record.delayReason;
      const last = record.runs.at(-1);
      if (last !== undefined && last.endedAt !== undefined && last.nextRunAt === undefined) last.nextRunAt = record.nextRunAt;
    }
    this.remember(record, entry);
  }

  /** `key` is now in `state` (since `at`, unless it was already): the queue's sets and its record say so; a key not delayed has no rerun due. */
  private move(key: ObjectKey, state: KeyState, at: number): KeyRecord {
    // A key waiting already (a trigger coalesced) has waited since it began to, and keeps its place in the order.
    if (state !== 'waiting' || !this.waiting.has(key)) {
      this.waiting.delete(key);
      this.running.delete(key);
      this.delayed.delete(key);
      if (state === 'waiting') this.waiting.set(key, at);
      else if (state === 'running') this.running.add(key);
      else if (state === 'delayed') this.delayed.add(key);
    }
    const record = this.record(key, at);
    if (record.state !== state) {
      record.state = state;
      record.since = at;
    }
    if (state !== 'delayed') {
      delete record.nextRunAt;
      delete record.delayReason;
    }
    return record;
  }

  private runStart(entry: RunStartEntry): void {
    // The run's start is its key's move to running.
    const record = this.move(entry.key, 'running', entry.at);
    const previous = record.runs.at(-1);
    const cause: RunCause | undefined =
      record.pending?.cause ?? (previous?.result === 'error' ? { via: 'retry' } : previous?.result === 'requeue' || previous?.result === 'requeue_after' ? { via: 'requeue' } : undefined);
    const run: LiveRunRecord = { startedAt: entry.at, attempt: entry.attempt, triggers: record.pending?.count ?? 0, writes: 0, events: 0, ...(cause !== undefined ? { cause } : {}) };
    if (entry.traceId !== undefined) run.traceId = entry.traceId;
    delete record.pending;
    record.attempt = entry.attempt;
    record.runCount++;
    pushCapped(record.runs, run, this.limits.runsPerKey);
    this.remember(record, entry);
  }

  private runEnd(entry: RunEndEntry): void {
    const record = this.record(entry.key, entry.at);
    let run = record.runs.at(-1);
    if (run === undefined || run.endedAt !== undefined) {
      // Its start was before the view began (or the key was dropped meanwhile): a run known by its end only.
      run = { startedAt: entry.at - entry.duration, attempt: entry.attempt, triggers: 0, writes: 0, events: 0 };
      record.runCount++;
      pushCapped(record.runs, run, this.limits.runsPerKey);
    }
    run.endedAt = entry.at;
    run.duration = entry.duration;
    run.result = entry.result;
    if (entry.error !== undefined) run.error = entry.error;
    if (entry.requeueAfter !== undefined) run.requeueAfter = entry.requeueAfter;
    record.attempt = entry.attempt;
    this.remember(record, entry);
  }

  private countInRun(entry: WriteEntry | EventEntry, field: 'writes' | 'events'): void {
    const record = this.record(entry.key, entry.at);
    const run = record.runs.at(-1);
    if (run !== undefined && run.endedAt === undefined) run[field]++;
    if (entry.type === 'write') {
      const { body: _body, ...kept } = entry;
      this.remember(record, kept);
    } else {
      this.remember(record, entry);
    }
  }

  private queueSummary(now: number): QueueSummary {
    const oldest = this.waiting.entries().next();
    return {
      depth: this.waiting.size,
      running: this.running.size,
      delayed: this.delayed.size,
      longestWait: oldest.done === true ? 0 : Math.max(0, now - oldest.value[1]),
      ...(oldest.done === true ? {} : { longestWaiting: oldest.value[0] }),
    };
  }

  private informerSummary(record: InformerRecord): InformerSummary {
    const size = this.stores?.[record.summary.resource]?.size;
    return { ...record.summary, ...(size !== undefined ? { objects: size } : {}) };
  }
}

function summarize(record: KeyRecord): KeySummary {
  const last = record.runs.at(-1);
  const ended = last?.endedAt !== undefined ? last : record.runs.at(-2);
  return {
    key: record.key,
    state: record.state,
    since: record.since,
    at: record.at,
    attempt: record.attempt,
    runs: record.runCount,
    ...(ended?.result !== undefined ? { result: ended.result } : {}),
    ...(ended?.duration !== undefined ? { duration: ended.duration } : {}),
    ...(ended?.error !== undefined ? { error: ended.error.length > 300 ? `${ended.error.slice(0, 300)}…` : ended.error } : {}),
    ...(record.nextRunAt !== undefined ? { nextRunAt: record.nextRunAt } : {}),
    ...(record.delayReason !== undefined ? { delayReason: record.delayReason } : {}),
    recent: record.runs.map((run) => (run.result === undefined ? '·' : letters[run.result])).join(''),
  };
}
