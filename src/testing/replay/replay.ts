import { deepStrictEqual } from 'node:assert';
import { KubeConfig } from '@kubernetes/client-node';
import { BehaviorSubject, concatMap, filter, firstValueFrom, from, isObservable, lastValueFrom, map, ReplaySubject, Subject, timer, type Observable, type Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { controller, type ControllerOptions, type ControllerReconciler, type ExtraWatch } from '../../controller/controller.js';
import type { Recording } from '../../observe/recording/format.js';
import { readRecording, RecordingError } from '../../observe/recording/readRecording.js';
import { OwnWritesClient } from '../../controller/ownWritesClient.js';
import { silentLogger } from '../../logger.js';
import type { ReconcileOutcome } from '../../operators/reconcileByKey.js';
import type { EventRecorder } from '../../sinks/events/eventRecorder.js';
import type { InformerEntry, TimelineEntry } from '../../observe/timeline.js';
import { resourceName, type KubeObject, type ListWatchEvent, type ObjectKey } from '../../types.js';
import { MarbleInformers } from '../marble/marbleInformers.js';
import { runVirtualTime } from '../marble/virtualTime.js';
import { compareRuns, type ReplayedRunResult } from './compareRuns.js';
import { replayClient, type ReplayedRunLog } from './replayClient.js';
import { runToRecordedEnd } from './runToRecordedEnd.js';
import { errorMessage, eventText, outcomeText, recordedRuns } from './runSteps.js';

/**
 * What `replay` takes: the reconcile to replay, and what a recording
 * cannot hold because it is code. Spread the controller's own options in
 * (`{ ...podAutoscalerOptions(kubeConfig), reconcile }`): `for`, `owns` and
 * `watches` bring their index functions and maps, and `predicates` and
 * `rateLimiter` their logic; `name`, `kubeConfig` and the rest are ignored.
 * Without `for`/`owns`, the recorded resources serve, without indexes;
 * without `watches`, the recorded resources are watched for their stores
 * and the recorded triggers of `watches` stand in for the maps.
 * Concurrency, timeout, retries and resync default to the recorded
 * controller's.
 */
export interface ReplayOptions<T extends KubeObject>
  extends Partial<Pick<ControllerOptions<T>, 'for' | 'owns' | 'watches' | 'predicates' | 'rateLimiter' | 'concurrency' | 'timeout' | 'maxRetries' | 'resyncPeriod' | 'gracePeriod' | 'logger' | 'readYourWrites'>> {
  /** The reconcile to replay: the recorded one, or a changed one to see what it would have done. */
  reconcile: ControllerReconciler<T>;
}

/** What a replay did, and how it compares with the recording. */
export interface ReplayResult {
  /** The recorded controller's name. */
  readonly controller: string;
  /** When the recording started (ms since the epoch); frames in `runs` are counted from it. */
  readonly start: number;
  /** Every run, recorded or replayed, paired by key and rank, in the order they started. */
  readonly runs: readonly ReplayedRunResult[];
  /** Runs compared (each recorded run that ended, and each replayed run). */
  readonly replayed: number;
  /** Those that differ. */
  readonly differ: number;
  /** The replayed reconcile's outcomes, with the time they came at. */
  readonly outcomes: readonly (ReconcileOutcome & { at: number })[];
  /** Set when the replayed controller's output errored (a cache that never synced, say). */
  readonly error?: string;
  /**
   * What the recording's reader tolerated, and what the replay gave up on:
   * runs still in flight when virtual time stayed idle for more than 20
   * turns before the recording's end (each waiting on something outside
   * virtual time), with the frame it stopped at.
   */
  readonly warnings: readonly string[];
}

/** A replayed run while it is collected. */
interface ReplayedLog extends ReplayedRunLog {
  readonly attempt: number;
  readonly start: number;
  end: number | undefined;
}

const triggerResource = { group: 'replay.rxkube.io', version: 'v1', resource: 'recordedtriggers', kind: 'RecordedTrigger' } as const;
const triggerKey = 'replay.rxkube.io/key';

function listWatchEvent(e: InformerEntry): ListWatchEvent | undefined {
  switch (e.event) {
    case 'Restart':
      return { type: 'Restart' };
    case 'Synced':
    case 'Bookmark':
      return { type: e.event, resourceVersion: e.resourceVersion ?? '' };
    case 'Listed':
    case 'Added':
    case 'Modified':
    case 'Deleted':
      return e.object === undefined ? undefined : { type: e.event, object: e.object };
    default:
      // Failures: the recorded source retried on its own; the store saw nothing.
      return undefined;
  }
}

/**
 * Feeds the recorded entries in virtual time, each at its recorded time, to one input per resource, the `watches`
 * triggers to one of its own, and the keys of the controller's `triggers` to `external`.
 */
function recordedInputs(entries: readonly TimelineEntry[], scheduler: TestScheduler, start: number, recordedTriggers: boolean) {
  const inputs = new Map<string, ReplaySubject<ListWatchEvent>>();
  const input = (name: string): ReplaySubject<ListWatchEvent> => {
    let subject = inputs.get(name);
    if (subject === undefined) inputs.set(name, (subject = new ReplaySubject<ListWatchEvent>()));
    return subject;
  };
  const external = new Subject<ObjectKey>();
  const triggers = input(resourceName(triggerResource));
  triggers.next({ type: 'Restart' });
  triggers.next({ type: 'Synced', resourceVersion: '0' });
  let n = 0;
  const feed = (e: TimelineEntry): void => {
    if (e.type === 'informer') {
      const event = listWatchEvent(e);
      if (event !== undefined) input(e.resource).next(event);
    } else if (e.type === 'trigger' && e.cause.via === 'trigger') {
      // A key from outside the cluster (a channel, a timer, a webhook): only the recording knows it.
      external.next(e.key);
    } else if (recordedTriggers && e.type === 'trigger' && e.cause.via === 'watches') {
      // A watch's map is code, not in the recording: its recorded triggers stand in for it.
      triggers.next({ type: 'Added', object: { metadata: { name: `t${++n}`, annotations: { [triggerKey]: e.key } } } });
    }
  };
  // How many entries have been fed: runs wait on it to start and end where the recorded ones did among them.
  const fed = new BehaviorSubject(0);
  // One scheduled action per entry, even several in one ms: between actions, promise callbacks settle, so a run
  // can end and the next start between two entries of the same ms, where the recorded ones did.
  const driver = from(entries).pipe(concatMap((e) => timer(Math.max(0, e.at - scheduler.now()), scheduler).pipe(map(() => e))));
  return {
    input,
    external,
    fedUpTo: (count: number): Promise<unknown> => (fed.value >= count ? Promise.resolve() : firstValueFrom(fed.pipe(filter((n) => n >= count)))),
    start: (): Subscription =>
      driver.subscribe((e) => {
        feed(e);
        fed.next(fed.value + 1);
      }),
    end: entries.reduce((t, e) => Math.max(t, e.at), start),
  };
}

/** Resync periods a replay steps through at most: a constant, and as many more per entry (the entries' own work bounds the rest). */
const resyncsPerEntry = 100;
const resyncsBase = 10_000;

/**
 * Refuses a recording whose times would have virtual time step through far
 * more resync periods than it has entries (one timestamp 31 years after
 * the rest, with a 1 s resync, is a billion steps): the replay's work stays
 * proportional to the entries. Names the first entry past the bound.
 */
function checkTimeSpan(read: Recording, resyncPeriod: number | undefined): void {
  if (resyncPeriod === undefined) return;
  const start = read.header.start;
  read.entries.forEach((e, i) => {
    const periods = (e.at - start) / resyncPeriod;
    if (periods > resyncsBase + resyncsPerEntry * (i + 1)) {
      const where = read.places?.[i] ?? `entry ${i + 1}`;
      throw new RecordingError(
        `${where}: at ${e.at} is ${Math.round(e.at - start)} ms after the recording's start, ${Math.round(periods)} resync periods of ${resyncPeriod} ms for ${i + 1} entries; replaying it would step through each (at most ${resyncsBase} and ${resyncsPerEntry} per entry)`,
      );
    }
  });
}

/** A recorder that keeps a run's Events as its steps: the replay writes nothing anywhere. */
function runRecorder(log: ReplayedRunLog, now: () => number): EventRecorder {
  let recorded = 0;
  return {
    record: (_regarding, event) => {
      recorded++;
      log.steps.push({ at: now(), text: eventText(event.type, event.reason, event.note ?? event.action) });
    },
    flush: async () => {},
    close: async () => {},
    stats: () => ({ recorded, created: 0, patched: 0, failed: 0, dropped: 0, tracked: 0 }),
  };
}

/**
 * Replays a recording (a path, or what `readRecording` read) with a
 * reconcile, in virtual time, and compares what it does with what the
 * recorded controller did.
 *
 * ```ts
 * const result = await replay('run.jsonl', { reconcile });
 * result.differ; // 0: the reconcile does what the recorded one did
 * ```
 *
 * How: the real `controller()` runs on a `TestScheduler` whose clock reads
 * the recorded times (`ctx.now()` included). Its informers get the recorded
 * informer events at their recorded times; the triggers of `for` and
 * `owns` come from those events as they did, those of `watches` through
 * the maps given, or as recorded without them; the keys of the recorded
 * controller's `triggers` (channels, timers, webhooks: outside the
 * recording's reach) come as recorded, at their recorded times. The nth run of a key is answered, request by
 * request, with what the nth recorded run of that key was answered (see
 * `replayClient`); a request it never made fails with an
 * `UnrecordedRequestError`. A run ends no earlier than its recorded run
 * did, so that the queue sees the same timing. Events are kept, never
 * written. It stops at the recording's last entry, then lets runs in
 * flight finish.
 *
 * Each run is compared with its recorded counterpart by its steps
 * (requests with their codes, Events, the outcome), in order; times are
 * shown, not compared. Deterministic: the same recording and reconcile
 * give the same result.
 */
export async function replay<T extends KubeObject = KubeObject>(recording: string | Recording, options: ReplayOptions<T>): Promise<ReplayResult> {
  if (options === null || typeof options !== 'object' || typeof options.reconcile !== 'function') throw new TypeError('replay needs options with a reconcile function');
  const read = typeof recording === 'string' ? await readRecording(recording, options.logger !== undefined ? { logger: options.logger } : {}) : recording;
  const { header } = read;
  checkTimeSpan(read, options.resyncPeriod ?? header.options.resyncPeriod);
  const logger = options.logger ?? silentLogger;
  const scheduler = new TestScheduler((actual, expected) => deepStrictEqual(actual, expected));
  scheduler.frame = header.start;
  const now = (): number => scheduler.now();

  const recorded = recordedRuns(read.entries);
  const inputs = recordedInputs(read.entries, scheduler, header.start, options.watches === undefined);
  const replayedRuns: ReplayedLog[] = [];
  const ranks = new Map<ObjectKey, number>();
  const userReconcile = options.reconcile;

  const reconcile: ControllerReconciler<T> = (key, ctx) => {
    const run = (ranks.get(key) ?? 0) + 1;
    ranks.set(key, run);
    const counterpart = recorded.get(key)?.[run - 1];
    // Counted from 1, as the timeline's run entries count (the queue's ctx.attempt counts from 0).
    const log: ReplayedLog = { key, run, attempt: ctx.attempt + 1, start: now(), end: undefined, steps: [] };
    replayedRuns.push(log);
    const answers = replayClient(counterpart, log, scheduler);
    // Read-your-own-writes hears the replayed writes as the recorded controller's heard the recorded ones.
    const client = ctx.client instanceof OwnWritesClient ? ctx.client.over(answers) : answers;
    // A run starts once every entry before the recorded start is in (the cache as it was then), and ends once every
    // entry before the recorded end is, no earlier than that end: the queue and the caches see the recorded order.
    const waitForRecordedEnd = async (): Promise<void> => {
      if (counterpart?.endIndex === undefined || counterpart.end === undefined) return;
      await inputs.fedUpTo(counterpart.endIndex);
      if (counterpart.end > now()) await firstValueFrom(timer(counterpart.end - now(), scheduler));
    };
    return (async () => {
      try {
        if (counterpart !== undefined) await inputs.fedUpTo(counterpart.startIndex);
        const value = await userReconcile(key, { ...ctx, signal: ctx.signal, object: ctx.store.get(key), client, recorder: runRecorder(log, now) });
        return isObservable(value) ? await lastValueFrom(value as Observable<unknown>, { defaultValue: undefined }) : value;
      } finally {
        await waitForRecordedEnd();
      }
    })() as ReturnType<ControllerReconciler<T>>;
  };

  const shutdown = new AbortController();
  const triggerWatch: ExtraWatch = { resource: triggerResource, map: (delta) => (delta.type === 'Added' ? [String(delta.object.metadata.annotations?.[triggerKey])] : []) };
  const ctl = controller<T>({
    name: header.controller,
    kubeConfig: new KubeConfig(),
    for: options.for ?? header.options.for,
    owns: options.owns ?? [...header.options.owns],
    watches: options.watches ?? [...header.options.watches.map((resource): ExtraWatch => ({ resource, map: () => [] })), triggerWatch],
    concurrency: options.concurrency ?? header.options.concurrency,
    ...(options.timeout ?? header.options.timeout) !== undefined ? { timeout: (options.timeout ?? header.options.timeout) as number } : {},
    ...(options.maxRetries ?? header.options.maxRetries) !== undefined ? { maxRetries: (options.maxRetries ?? header.options.maxRetries) as number } : {},
    ...(options.resyncPeriod ?? header.options.resyncPeriod) !== undefined ? { resyncPeriod: (options.resyncPeriod ?? header.options.resyncPeriod) as number } : {},
    readYourWrites: options.readYourWrites ?? (header.options.readYourWrites === undefined ? false : { timeout: header.options.readYourWrites.timeout ?? Infinity }),
    ...(options.predicates !== undefined ? { predicates: options.predicates } : {}),
    ...(options.rateLimiter !== undefined ? { rateLimiter: options.rateLimiter } : {}),
    triggers: [{ name: 'recorded triggers', keys: inputs.external }],
    informers: new MarbleInformers((resource) => inputs.input(resourceName(resource)), { scheduler, logger }),
    client: replayClient(undefined, { key: '(outside a run)', run: 0, steps: [] }, scheduler),
    recorder: runRecorder({ key: '(outside a run)', run: 0, steps: [] }, now),
    scheduler,
    logger,
    processMetrics: false,
    signal: shutdown.signal,
    reconcile,
  });

  const outcomes: (ReconcileOutcome & { at: number })[] = [];
  let failure: string | undefined;
  let completed = false;
  const main = ctl.subscribe({
    next: (outcome) => {
      outcomes.push({ ...outcome, at: now() });
      const log = [...replayedRuns].reverse().find((r) => r.key === outcome.key && r.end === undefined);
      if (log === undefined) return;
      log.end = now();
      log.steps.push({ at: now(), text: outcomeText(outcome.key, outcome.result, outcome.error === undefined ? undefined : errorMessage(outcome.error)) });
    },
    error: (err: unknown) => {
      failure = errorMessage(err);
      completed = true;
    },
    complete: () => {
      completed = true;
    },
  });
  const warnings = [...read.warnings];
  const driver = inputs.start();
  try {
    const gaveUp = await runToRecordedEnd(scheduler, inputs.end, {
      start: header.start,
      completed: () => completed,
      inFlight: () => replayedRuns.filter((r) => r.end === undefined).map((r) => `run ${r.run} of "${r.key}"`),
    });
    if (gaveUp !== undefined) warnings.push(gaveUp);
    shutdown.abort();
    await runVirtualTime(scheduler, { until: scheduler.frame + (options.gracePeriod ?? 30_000), stopWhen: () => completed });
  } finally {
    driver.unsubscribe();
    main.unsubscribe();
  }
  const runs = compareRuns(recorded, replayedRuns);
  const compared = runs.filter((r) => r.compared);
  return {
    controller: header.controller,
    start: header.start,
    runs,
    replayed: compared.length,
    differ: compared.filter((r) => !r.same).length,
    outcomes,
    ...(failure !== undefined ? { error: failure } : {}),
    warnings,
  };
}
