import type { KubeConfig } from '@kubernetes/client-node';
import { asyncScheduler, type SchedulerLike } from 'rxjs';
import { defaultLogger, type Logger } from '../../logger.js';
import { kubeMicroTime } from '../../util/time.js';
import type { KubeObject } from '../../types.js';
import { kubeClient, type KubeClient } from '../client/kubeClient.js';
import { delay } from '../../util/wait.js';
import { isAlreadyExists, isNotFound, KubeApiError } from '../client/errors.js';
import { objectReference, type ObjectReference } from './objectReference.js';

/** What happened, as `kubectl describe` shows it. */
export interface EventInput {
  /** `Normal`, or `Warning` for something a person may need to act on. */
  type: 'Normal' | 'Warning';
  /** Why the action was taken, CamelCase, at most 128 characters ("ScalingReplicaSet"). */
  reason: string;
  /** What was done or failed, at most 128 characters ("Scale"). */
  action: string;
  /** A sentence for humans; cut to 1 kB, kube's limit. */
  note?: string;
  /** A second object the event is about (e.g. the ReplicaSet a Deployment scaled). */
  related?: KubeObject | ObjectReference;
}

/** What an `eventRecorder` writes with, who it reports as, and how it groups repeats. */
export interface EventRecorderOptions {
  /** The client to write with; or give `kubeConfig` and one is made. */
  client?: KubeClient;
  /** Where the Events go when no `client` is given. */
  kubeConfig?: KubeConfig;
  /** The controller's name, e.g. `apps.example.com/app-controller`. */
  reportingController: string;
  /** This replica, e.g. the pod name. */
  reportingInstance: string;
  /** The clock for series and the waits between retries (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
  /** Where failed writes are logged (default: pino to stderr). */
  logger?: Logger;
  /** Repeats closer than this (ms) to the last one join its series (default 6 minutes, as client-go). */
  seriesWindow?: number;
  /** Tries per write when the server is unreachable or answers 429/5xx (default 12, as client-go). */
  maxAttempts?: number;
  /** Ms between those tries, ±25 % (default 10 s, as client-go). */
  retryDelay?: number;
  /** Distinct events waiting to be written at most; more are dropped and counted (default 1000, as client-go). */
  maxPending?: number;
  /** Source of retry jitter in [0, 1) (default `Math.random`). */
  random?: () => number;
}

/** What a recorder did, for tests and diagnostics. */
export interface EventRecorderStats {
  /** Calls of `record` that were accepted. */
  recorded: number;
  /** Events created. */
  created: number;
  /** Series updates patched onto an existing Event. */
  patched: number;
  /** Writes given up (after retries, or refused by the server), and records refused as invalid. */
  failed: number;
  /** Records not written because the recorder was closed or too far behind. */
  dropped: number;
  /** Series held in memory now (the events of the last `seriesWindow`, roughly). */
  tracked: number;
}

/**
 * Records `events.k8s.io/v1` Events in the background: repeats within the series window patch one Event; it never throws and never blocks a reconcile.
 */
export interface EventRecorder {
  /**
   * Records an event about `regarding`. Returns at once and never throws:
   * the write happens in the background, and a failure is logged and
   * counted, never passed to the caller (an event is worth less than the
   * reconcile that records it).
   */
  record(regarding: KubeObject | ObjectReference, event: EventInput): void;
  /** Resolves when every event recorded so far is written (or given up). */
  flush(): Promise<void>;
  /**
   * Stops accepting events and resolves once the queue is empty: writes
   * still queued get one try each, and none waits to be retried.
   */
  close(): Promise<void>;
  /** What it has done so far: recorded, created, patched, failed and dropped Events, and series tracked. */
  stats(): EventRecorderStats;
}

/** An `events.k8s.io/v1` Event, as written. */
interface EventBody extends KubeObject {
  eventTime: string;
  reportingController: string;
  reportingInstance: string;
  action: string;
  reason: string;
  /** `Normal` or `Warning`. */
  type: EventInput['type'];
  regarding: ObjectReference;
  related?: ObjectReference;
  note?: string;
  series?: { count: number; lastObservedTime: string };
}

interface Series {
  event: EventBody;
  count: number;
  lastObserved: number;
  created: boolean;
  queued: boolean;
}

const noteLimit = 1024;
const nameLimit = 253;

function truncateBytes(text: string, limit: number): string {
  if (Buffer.byteLength(text) <= limit) return text;
  let cut = text.slice(0, limit);
  while (Buffer.byteLength(cut) > limit) cut = cut.slice(0, -1);
  return cut;
}

function checkInput(event: EventInput): void {
  if (event === null || typeof event !== 'object') throw new TypeError(`expected an event, got ${String(event)}`);
  if (event.type !== 'Normal' && event.type !== 'Warning') {
    throw new TypeError(`event type must be "Normal" or "Warning", got ${JSON.stringify(event.type)}`);
  }
  for (const field of ['reason', 'action'] as const) {
    const value = event[field];
    if (typeof value !== 'string' || value === '' || value.length > 128) {
      throw new TypeError(`event ${field} must be 1 to 128 characters, got ${JSON.stringify(value)}`);
    }
  }
}

function transient(err: unknown): boolean {
  return err instanceof KubeApiError && (err.code === 0 || err.code === 429 || err.code >= 500);
}

/**
 * Records `events.k8s.io/v1` Events, as client-go's events broadcaster does:
 *
 * - Events that repeat (same type, reason, action, regarding and related
 *   object, and reporter: client-go's key, which leaves out the note) within
 *   `seriesWindow` of the last one form a series: the first creates an
 *   Event, the repeats patch its `series` (`count`, `lastObservedTime`)
 *   rather than creating more Events. A repeat after a longer silence starts
 *   a new Event. The note of a series is its first one. Since the reference
 *   holds the object's resourceVersion, as client-go's does, an event about a
 *   newer version of the object starts a new series.
 * - Writes are queued and sent one at a time in the background. Repeats
 *   that arrive while their series waits to be written coalesce into one
 *   write with the latest count, so a burst costs a few writes, not one
 *   per repeat.
 * - An unreachable server, a 429 or a 5xx is retried (`maxAttempts`,
 *   `retryDelay`); any other refusal is logged, counted and dropped. A
 *   series whose Event was deleted is created again.
 *
 * Series older than the window are forgotten as new events come, so the
 * memory kept follows the events of the last few minutes. Nothing is
 * scheduled while the queue is empty: an idle recorder keeps no timer.
 */
export function eventRecorder(options: EventRecorderOptions): EventRecorder {
  const { reportingController, reportingInstance } = options;
  for (const [field, value] of [
    ['reportingController', reportingController],
    ['reportingInstance', reportingInstance],
  ] as const) {
    if (typeof value !== 'string' || value === '' || value.length > 128) {
      throw new TypeError(`eventRecorder needs ${field} of 1 to 128 characters, got ${JSON.stringify(value)}`);
    }
  }
  const logger = options.logger ?? defaultLogger({ part: 'eventRecorder' });
  const scheduler = options.scheduler ?? asyncScheduler;
  const window = options.seriesWindow ?? 6 * 60_000;
  const maxAttempts = options.maxAttempts ?? 12;
  const retryDelay = options.retryDelay ?? 10_000;
  const maxPending = options.maxPending ?? 1000;
  const random = options.random ?? Math.random;
  const client =
    options.client ??
    (options.kubeConfig !== undefined ? kubeClient(options.kubeConfig, { logger, scheduler }) : undefined);
  if (client === undefined) throw new TypeError('eventRecorder needs a client or a kubeConfig');

  const series = new Map<string, Series>();
  const queue = new Set<Series>();
  const stats: Omit<EventRecorderStats, 'tracked'> = { recorded: 0, created: 0, patched: 0, failed: 0, dropped: 0 };
  const closing = new AbortController();
  let pumping: Promise<void> | undefined;
  let sequence = 0;
  let lastSweep = scheduler.now();

  const newEvent = (regarding: ObjectReference, event: EventInput, related: ObjectReference | undefined, now: number): EventBody => {
    sequence = (sequence + 1) % 1_000_000;
    const suffix = `.${(BigInt(Math.floor(now)) * 1_000_000n + BigInt(sequence)).toString(16)}`;
    const body: EventBody = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: regarding.name.slice(0, nameLimit - suffix.length) + suffix, namespace: regarding.namespace ?? 'default' },
      eventTime: kubeMicroTime(now),
      reportingController,
      reportingInstance,
      action: event.action,
      reason: event.reason,
      type: event.type,
      regarding,
    };
    if (event.note !== undefined) body.note = truncateBytes(String(event.note), noteLimit);
    if (related !== undefined) body.related = related;
    return body;
  };

  const sweep = (now: number): void => {
    if (now - lastSweep < 60_000) return;
    lastSweep = now;
    for (const [key, s] of series) if (now - s.lastObserved >= window && !s.queued) series.delete(key);
  };

  const write = async (s: Series): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      const body: EventBody =
        s.count > 1
          ? { ...s.event, series: { count: s.count, lastObservedTime: kubeMicroTime(s.lastObserved) } }
          : s.event;
      try {
        if (!s.created) {
          await client.create(body);
          s.created = true;
          stats.created += 1;
        } else {
          await client.patchMerge(s.event, { series: body.series });
          stats.patched += 1;
        }
        return;
      } catch (err) {
        if (s.created && isNotFound(err)) {
          // The Event was deleted (or expired): record the series anew.
          s.created = false;
          continue;
        }
        if (!s.created && isAlreadyExists(err)) {
          // Created by an earlier try whose answer was lost: the series goes on as a patch.
          s.created = true;
          continue;
        }
        const give = !transient(err) || attempt >= maxAttempts || closing.signal.aborted;
        if (give) {
          stats.failed += 1;
          logger.error(
            { err: err instanceof Error ? err.message : String(err), reason: s.event.reason, attempts: attempt },
            'event not recorded',
          );
          return;
        }
        try {
          await delay(retryDelay * (0.75 + random() * 0.5), scheduler, closing.signal);
        } catch {
          // Closed while waiting: the next round gives up.
        }
      }
    }
  };

  const pump = (): void => {
    if (pumping !== undefined) return;
    pumping = (async () => {
      for (let next = queue.values().next(); !next.done; next = queue.values().next()) {
        const s = next.value;
        queue.delete(s);
        s.queued = false;
        try {
          await write(s);
        } catch (err) {
          stats.failed += 1;
          logger.error({ err: err instanceof Error ? err.message : String(err) }, 'event not recorded');
        }
      }
    })().finally(() => {
      pumping = undefined;
      if (queue.size > 0) pump();
    });
  };

  const enqueue = (s: Series): void => {
    if (s.queued) return;
    if (queue.size >= maxPending) {
      stats.dropped += 1;
      logger.warn({ reason: s.event.reason, pending: queue.size }, 'event dropped: too many events waiting to be written');
      return;
    }
    s.queued = true;
    queue.add(s);
    pump();
  };

  return {
    record(regarding, event) {
      try {
        if (closing.signal.aborted) {
          stats.dropped += 1;
          logger.warn({ reason: (event as EventInput | undefined)?.reason }, 'event dropped: the recorder is closed');
          return;
        }
        checkInput(event);
        const ref = objectReference(regarding);
        const related = event.related === undefined ? undefined : objectReference(event.related);
        const now = scheduler.now();
        sweep(now);
        const key = JSON.stringify([event.type, event.action, event.reason, ref, related ?? null]);
        const existing = series.get(key);
        stats.recorded += 1;
        if (existing !== undefined && now - existing.lastObserved < window) {
          existing.count += 1;
          existing.lastObserved = now;
          enqueue(existing);
          return;
        }
        const fresh: Series = { event: newEvent(ref, event, related, now), count: 1, lastObserved: now, created: false, queued: false };
        series.set(key, fresh);
        enqueue(fresh);
      } catch (err) {
        stats.failed += 1;
        logger.error({ err: err instanceof Error ? err.message : String(err) }, 'event not recorded: invalid');
      }
    },
    async flush() {
      while (pumping !== undefined) await pumping;
    },
    async close() {
      closing.abort();
      while (pumping !== undefined) await pumping;
    },
    stats: () => ({ ...stats, tracked: series.size }),
  };
}
