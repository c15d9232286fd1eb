import { AssertionError, deepStrictEqual } from 'node:assert';
import { KubeConfig } from '@kubernetes/client-node';
import { concatMap, finalize, from, isObservable, of, tap, type Observable, type Subscription } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { controller, type Controller, type ControllerContext, type ControllerOptions, type ControllerReconciler } from '../../controller/controller.js';
import { silentLogger } from '../../logger.js';
import type { ReconcileOutcome } from '../../operators/reconcileByKey.js';
import type { KubeClient } from '../../sinks/client/kubeClient.js';
import { UnknownResourceError } from '../../sinks/client/resources.js';
import { resourceName, type ResourceRef, type KubeObject, type ListWatchEvent, type ObjectKey } from '../../types.js';
import { coldMarbles, hotMarbles, marbleTime } from './marbles.js';
import { MarbleInformers } from './marbleInformers.js';
import { memoryClient, memoryClientInternals, type MemoryClient, type MemoryClientOptions } from '../memory/memoryClient.js';
import { memoryRecorder, type MemoryRecorder, type RecordedEvent } from '../memory/memoryRecorder.js';
import type { MemoryRequest } from '../memory/memoryRequest.js';
import type { TriggerEntry } from '../../observe/timeline.js';
import { renderValue, type Pattern } from './patterns.js';
import { expectTimeline, timelineRecorder, type Timeline, type TimelineView } from './timeline.js';
import { checkExpected, expectInOrder, expectNone, windowEnds, type TimeWindow } from './looseExpectations.js';
import { eventsView, outcomesView, requestsView, triggersView, writesView } from './views.js';
import { runVirtualTime, settle } from './virtualTime.js';

/**
 * What `runReconcile` takes: the options of `controller()` (its reconcile,
 * `for`, `owns`, `watches`, predicates, concurrency, rate limiter, timeout,
 * retries, resync), without what the run provides itself: the kubeconfig,
 * informers, client, recorder, scheduler and shutdown signal. There is no
 * leader election: a run always leads.
 */
export interface RunReconcileOptions<T extends KubeObject>
  extends Omit<ControllerOptions<T>, 'name' | 'kubeConfig' | 'clusters' | 'informers' | 'client' | 'recorder' | 'scheduler' | 'leaderElection' | 'signal'> {
  /** Default `test-controller`; also the field manager of the client. */
  name?: string;
  /** Options of the memory client. The resources of `for`, `owns` and `watches` are served without being listed here. */
  client?: Omit<MemoryClientOptions, 'scheduler'>;
  /**
   * Stop at this virtual time (ms). Default: when nothing is left to do (no
   * timer pending, no reconcile in flight).
   */
  until?: number;
  /** Fail if still busy past this virtual time without `until` (default one day). */
  maxTime?: number;
  /** Fail after this many scheduled actions (default 100 000). */
  maxSteps?: number;
}

/**
 * The timelines of a run that `expectInOrder` and `expectNone` read:
 * `outcomes` (`'<key> <result>'`), `writes` and `requests` (reads too; both
 * `'<verb> <resource> <key>[ <code> <reason>]'`), `events`
 * (`'<type> <reason> <key>'`) and `triggers`, why each key ran
 * (`'<key> via <for|owns|watches|resync|trigger> <delta> <resource> <objectKey>'`,
 * or a pattern of a `TriggerEntry`: `{ key, cause: { via: 'owns' } }`).
 */
export type RunTimeline = 'outcomes' | 'writes' | 'requests' | 'events' | 'triggers';

const runTimelines: readonly RunTimeline[] = ['outcomes', 'writes', 'requests', 'events', 'triggers'];

/** A change someone else makes to the cluster, through a client of their own (`kubectl` as field manager). */
export type ClusterChange = (kubectl: KubeClient) => unknown;

/** What the body of `runReconcile` gets to set up a run and state what it expects. */
export interface ReconcileRunHelpers<T extends KubeObject> {
  /** The run's clock. Pass it to anything of the reconcile's own that waits. */
  scheduler: TestScheduler;
  /** A cold Observable from a marble diagram (`TestScheduler.run` syntax: 1 frame = 1 ms, `10ms` advances time). */
  cold<V = string>(marbles: string, values?: Readonly<Record<string, V>>, error?: unknown): Observable<V>;
  /** A hot Observable from a marble diagram, frames counted from the start of the run. */
  hot<V = string>(marbles: string, values?: Readonly<Record<string, V>>, error?: unknown): Observable<V>;
  /** The frame of `|` in a diagram. */
  time(marbles: string): number;
  /** The in-memory cluster the reconcile writes to (`ctx.client`). */
  client: MemoryClient;
  /** Where `ctx.recorder` records. */
  recorder: MemoryRecorder;
  /** The controller under test (its stores and metrics can be read during and after the run). */
  controller: Controller<T>;
  /** Objects in the cluster before the controller starts (unrecorded): the first list holds them. */
  seed<O extends KubeObject>(...objects: O[]): O[];
  /**
   * Changes that someone else makes, at the frames of a marble diagram:
   * `cluster('--a', { a: (kubectl) => kubectl.patchMerge(web, { spec: { replicas: 5 } }) })`.
   * They are not recorded as the reconcile's writes and never meet injected
   * faults. A change that fails ends the run with its error.
   */
  cluster(marbles: string, changes: Readonly<Record<string, ClusterChange>>): void;
  /**
   * Scripts what the watch of a resource shows, instead of the memory
   * cluster's own watch: a marble diagram of `ListWatchEvent`s (or arrays
   * of them, such as `list([...])`). The objects it shows are put into the
   * cluster as shown, so that the reconcile's reads and writes meet them;
   * the reconcile's own writes to that resource do not come back through it.
   */
  watch(resource: ResourceRef, events: Observable<ListWatchEvent | readonly ListWatchEvent[]>): void;
  /** The controller's outcomes; values are patterns or `'<key> <result>'` strings. */
  expectOutcomes(marbles: string, values?: Readonly<Record<string, Pattern>>, error?: unknown): void;
  /** The reconcile's writes (`client.writes`); values are patterns or `'<verb> <resource> <key>[ <code> <reason>]'` strings. */
  expectWrites(marbles: string, values?: Readonly<Record<string, Pattern>>): void;
  /** The Events recorded; values are patterns or `'<type> <reason> <key>'` strings. */
  expectEvents(marbles: string, values?: Readonly<Record<string, Pattern>>): void;
  /**
   * Loose form: items of a timeline match `expected` one each, in that
   * order, inside `window` if given, with anything else allowed around
   * them. Unlike the marble diagrams it names no frame, so one more request
   * in the reconcile does not break it. Items are patterns or the short
   * strings of `RunTimeline`. On a mismatch it names the first item that is
   * missing, out of order, or outside the window.
   */
  expectInOrder(timeline: RunTimeline, expected: readonly Pattern[], window?: TimeWindow): void;
  /** Loose form: no item of a timeline inside `window` (default: the whole run) matches `pattern`. */
  expectNone(timeline: RunTimeline, pattern: Pattern, window?: TimeWindow): void;
  /** Any Observable, subscribed when the run starts; values are patterns. */
  expectObservable<V>(observable: Observable<V>): { toBe(marbles: string, values?: Readonly<Record<string, Pattern>>, error?: unknown): void };
}

/** An outcome, with when it came. */
export type TimedOutcome = ReconcileOutcome & { at: number };

/** What a run did, for assertions after it. */
export interface ReconcileRun<T extends KubeObject> {
  /** Every outcome of the run, with the virtual time it came at. */
  outcomes: TimedOutcome[];
  /** Set when the controller's output errored. */
  error?: unknown;
  /** The writes the reconcile made (create, update, patch, apply, delete), in order. */
  writes: readonly MemoryRequest[];
  /** Every request the reconcile's client made, reads included. */
  requests: readonly MemoryRequest[];
  /** The Events the reconcile recorded. */
  events: readonly RecordedEvent[];
  /** The in-memory cluster's client, to read the end state from. */
  client: MemoryClient;
  /** The recorder the reconcile recorded Events on. */
  recorder: MemoryRecorder;
  /** The controller that ran, to read its stores and metrics. */
  controller: Controller<T>;
  /** The virtual time the run stopped at, and why. */
  frame: number;
  /** `idle`: nothing was left to do; `until`: the `until` time came; `completed`: the controller's output ended. */
  stoppedBy: 'idle' | 'until' | 'completed';
}

/** A reconcile in flight, to name it when it never finishes. */
interface InFlight {
  key: ObjectKey;
  since: number;
  ctx: ControllerContext<KubeObject>;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return value !== null && typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * Serves the watched resources the client does not know yet, as custom
 * resources. One in kube's own groups that the built-ins lack (`configmap`
 * for `configmaps`) is not served: its watch then fails as the embedded API
 * server's would, instead of a typo becoming an empty resource of its own.
 */
function serveWatched<T extends KubeObject>(client: MemoryClient, options: RunReconcileOptions<T>): void {
  const watched = [options.for, ...(options.owns ?? []), ...(options.watches ?? []).map((w) => w.resource)];
  for (const { group, version, resource, kind } of watched) {
    try {
      client.serve({ group, version, resource, kind });
    } catch (err) {
      if (!(err instanceof UnknownResourceError)) throw err;
    }
  }
}

/**
 * Runs a controller's reconcile in virtual time, in the same pipeline
 * `controller()` builds (it *is* `controller()`, with informers fed from
 * marble diagrams or an in-memory cluster), and checks what it did against
 * marble diagrams: its outcomes, its writes and its Events.
 *
 * ```ts
 * await runReconcile({ for: configMaps, reconcile }, ({ seed, client, expectOutcomes, expectWrites }) => {
 *   seed(configMap('web'));
 *   client.faults.failNext(1, { code: 409, verb: 'update' });
 *   expectOutcomes('a 4ms b', { a: 'default/web error', b: 'default/web success' });
 *   expectWrites('a 4ms b', { a: 'update configmaps default/web 409 Conflict', b: 'update configmaps default/web' });
 * });
 * ```
 *
 * How time goes: `body` sets the run up; then the controller is subscribed
 * at frame 0 and virtual time advances one scheduled action at a time,
 * with promise callbacks settling between actions, so `async` reconciles
 * run as under the real clock: a write's promise resolves at the frame it
 * was made, a retry comes after exactly the rate limiter's delay. The run
 * ends when nothing is left to do, or at `until`; then the controller is
 * shut down, and the expectations are checked.
 *
 * Where the stores' events come from: each watched resource lists and
 * watches the memory cluster (seeded objects, then every write, the
 * reconcile's own included, as a real watch would show them), unless
 * `watch()` scripts it.
 *
 * It fails, naming what went wrong, when: an expectation does not match (the
 * message shows both timelines); a reconcile never finishes although
 * nothing is left to do in virtual time (it waits on a real timer or I/O,
 * or a promise nothing resolves); a `cluster()` change fails; the reconcile
 * recorded an Event the real recorder refuses; the controller's output
 * errored and no `expectOutcomes` said so; or virtual time never goes idle
 * (give it `until`).
 */
export async function runReconcile<T extends KubeObject = KubeObject>(
  options: RunReconcileOptions<T>,
  body?: (helpers: ReconcileRunHelpers<T>) => void | Promise<void>,
): Promise<ReconcileRun<T>> {
  if (options === null || typeof options !== 'object' || typeof options.reconcile !== 'function') {
    throw new TypeError('runReconcile needs options with a reconcile function');
  }
  const scheduler = new TestScheduler((actual, expected) => deepStrictEqual(actual, expected));
  const name = options.name ?? 'test-controller';
  const logger = options.logger ?? silentLogger;
  // The client's own resources first: a CRD given there (with its scope and schema) wins over the bare shape of a watched resource.
  const client = memoryClient({ fieldManager: name, ...options.client, scheduler });
  serveWatched(client, options);
  const recorder = memoryRecorder({ scheduler });
  const scripted = new Map<string, Observable<ListWatchEvent>>();
  const informers = new MarbleInformers(
    (resource, selectors) => scripted.get(resourceName(resource)) ?? client.watch(resource, selectors),
    { scheduler, logger },
  );

  const inFlight = new Set<InFlight>();
  const userReconcile = options.reconcile as ControllerReconciler<KubeObject>;
  const reconcile: ControllerReconciler<KubeObject> = (key, ctx) => {
    const run: InFlight = { key, since: scheduler.now(), ctx };
    inFlight.add(run);
    const done = () => inFlight.delete(run);
    let result;
    try {
      result = userReconcile(key, ctx);
    } catch (err) {
      done();
      throw err;
    }
    if (isObservable(result)) return result.pipe(finalize(done));
    if (isPromiseLike(result)) {
      // A promise may resolve to an observable, which is still in flight until it ends.
      return Promise.resolve(result).then(
        (value) => (isObservable(value) ? value.pipe(finalize(done)) : (done(), value)),
        (err: unknown) => {
          done();
          throw err;
        },
      );
    }
    done();
    return result;
  };

  const shutdown = new AbortController();
  const { client: _c, until, maxTime, maxSteps, ...controllerOptions } = options;
  const ctl = controller<T>({
    ...controllerOptions,
    name,
    logger,
    kubeConfig: new KubeConfig(),
    informers,
    client,
    recorder,
    scheduler,
    // A run in virtual time has no use for the process's CPU and memory, and each registry that gets them keeps a monitor.
    processMetrics: options.processMetrics ?? false,
    signal: shutdown.signal,
    reconcile: reconcile as ControllerReconciler<T>,
  });

  const starts: (() => Subscription)[] = [];
  const checks: (() => void)[] = [];
  let changeFailure: Error | undefined;
  let recording = true;
  let outcomesExpected = false;
  const now = () => scheduler.now();
  const kubectl = client.as('kubectl');

  const expectOn = <V>(timeline: () => Timeline<V>, view: TimelineView<V>) => (marbles: string, values?: Readonly<Record<string, Pattern>>, error?: unknown) => {
    checks.push(() => expectTimeline(timeline(), marbles, values, error, view));
  };
  const timed = <V extends { at: number }>(items: () => readonly V[]): (() => Timeline<V>) => () =>
    items().map((value) => ({ frame: value.at, notification: { kind: 'N' as const, value } }));

  const outcomes = timelineRecorder<ReconcileOutcome>(now);
  // Why each key ran, from the controller's timeline: read only when a test asks, as the live view would.
  const triggers = timelineRecorder<TriggerEntry>(now);
  let triggersRead = false;
  const readTriggers = () => {
    if (!triggersRead) starts.push(() => ctl.timeline.subscribe((e) => recording && e.type === 'trigger' && triggers.next(e)));
    triggersRead = true;
    return () => triggers.timeline;
  };
  const loose = <V>(timeline: () => Timeline<V>, view: TimelineView<V>) => ({
    // The arguments are checked at once, so that a mistake in them fails before the run, not after it.
    inOrder: (expected: readonly Pattern[], window?: TimeWindow) => {
      checkExpected(expected, view.name);
      windowEnds(window);
      checks.push(() => expectInOrder(timeline(), expected, window, view));
    },
    none: (pattern: Pattern, window?: TimeWindow) => {
      windowEnds(window);
      checks.push(() => expectNone(timeline(), pattern, window, view));
    },
  });
  const looseOn = (name: RunTimeline, method: string) => {
    if (!runTimelines.includes(name)) throw new TypeError(`${method}: no timeline ${renderValue(name)}; a run has ${runTimelines.join(', ')}`);
    if (name === 'outcomes') return loose(() => outcomes.timeline, outcomesView);
    if (name === 'writes') return loose(timed(() => client.writes), writesView);
    if (name === 'requests') return loose(timed(() => client.requests), requestsView);
    if (name === 'events') return loose(timed(() => recorder.events), eventsView);
    return loose(readTriggers(), triggersView);
  };
  const helpers: ReconcileRunHelpers<T> = {
    scheduler,
    cold: (marbles, values, error) => coldMarbles(scheduler, marbles, values, error),
    hot: (marbles, values, error) => hotMarbles(scheduler, marbles, values, error),
    time: marbleTime,
    client,
    recorder,
    controller: ctl,
    seed: (...objects) => client.seed(...objects),
    cluster(marbles, changes) {
      const source = coldMarbles(scheduler, marbles, changes);
      starts.push(() =>
        source.subscribe((change) => {
          const fail = (err: unknown) => {
            changeFailure ??= new Error(`the cluster change at ${scheduler.now()} ms of '${marbles}' failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
          };
          try {
            const result = typeof change === 'function' ? change(kubectl) : fail(new TypeError('a cluster change must be a function of a client'));
            if (isPromiseLike(result)) Promise.resolve(result).catch(fail);
          } catch (err) {
            fail(err);
          }
        }),
      );
    },
    watch(resource, events) {
      const behind = memoryClientInternals(client);
      const type = behind.typeOf(resource);
      scripted.set(
        resourceName(resource),
        events.pipe(
          concatMap((e) => (Array.isArray(e) ? from(e as readonly ListWatchEvent[]) : of(e as ListWatchEvent))),
          tap((e) => {
            if (e.type === 'Listed' || e.type === 'Added' || e.type === 'Modified' || e.type === 'Deleted') {
              behind.mirror(type, e.object, e.type === 'Deleted');
            }
          }),
        ),
      );
    },
    expectOutcomes(marbles, values, error) {
      outcomesExpected = true;
      checks.push(() => expectTimeline(outcomes.timeline, marbles, values, error, outcomesView));
    },
    expectWrites: expectOn(timed(() => client.writes), writesView),
    expectInOrder: (timeline, expected, window) => looseOn(timeline, 'expectInOrder').inOrder(expected, window),
    expectNone: (timeline, pattern, window) => looseOn(timeline, 'expectNone').none(pattern, window),
    expectEvents: expectOn(timed(() => recorder.events), eventsView),
    expectObservable<V>(observable: Observable<V>) {
      const seen = timelineRecorder<V>(now);
      starts.push(() =>
        observable.subscribe({
          next: (v) => recording && seen.next(v),
          error: (e: unknown) => recording && seen.error(e),
          complete: () => recording && seen.complete(),
        }),
      );
      return { toBe: expectOn(() => seen.timeline, { name: 'values' }) };
    },
  };

  await body?.(helpers);

  const watchedNames = informers.resourceNames();
  for (const scriptedName of scripted.keys()) {
    if (!watchedNames.includes(scriptedName)) {
      throw new Error(`watch(${scriptedName}) scripts a resource the controller does not watch (it watches ${watchedNames.join(', ')})`);
    }
  }

  let completed = false;
  let outputError: { error: unknown } | undefined;
  const subscriptions = starts.map((start) => start());
  const main = ctl.subscribe({
    next: (o) => recording && outcomes.next(o),
    error: (e: unknown) => {
      completed = true;
      if (recording) {
        outputError = { error: e };
        outcomes.error(e);
      }
    },
    complete: () => {
      completed = true;
      if (recording) outcomes.complete();
    },
  });

  const stopOnFailure = () => {
    if (changeFailure !== undefined) throw changeFailure;
  };
  let stop: { reason: 'idle' | 'until' | 'stopped'; frame: number } | undefined;
  let stoppedBy: ReconcileRun<T>['stoppedBy'];
  try {
    for (;;) {
      stop = await runVirtualTime(scheduler, {
        ...(until !== undefined ? { until } : {}),
        maxTime: maxTime ?? 24 * 3600_000,
        maxSteps: maxSteps ?? 100_000,
        afterStep: stopOnFailure,
        stopWhen: () => completed,
      });
      if (stop.reason !== 'idle' || completed) break;
      // Idle with reconciles in flight: give callbacks outside virtual time a few turns to come back.
      const stuck = [...inFlight].filter((r) => !r.ctx.signal.aborted);
      if (stuck.length === 0) break;
      for (let turn = 0; turn < 20 && scheduler.actions.length === 0 && stuck.some((r) => inFlight.has(r)); turn++) await settle();
      if (scheduler.actions.length > 0 || !stuck.some((r) => inFlight.has(r))) continue;
      throw new Error(
        `${stuck.length === 1 ? 'a reconcile never finished' : `${stuck.length} reconciles never finished`} although virtual time has nothing left to do at ${scheduler.frame} ms: ` +
          stuck.map((r) => `"${r.key}" (started at ${r.since} ms)`).join(', ') +
          '. It waits for something outside virtual time: a real timer or I/O, or a promise nothing resolves. ' +
          'Wait through the run\'s scheduler (and the client it is given) instead.',
      );
    }
    stoppedBy = completed || stop.reason === 'stopped' ? 'completed' : stop.reason;
  } finally {
    recording = false;
    for (const s of subscriptions) s.unsubscribe();
    shutdown.abort();
    // Reconciles still in flight get their grace period, in virtual time and unrecorded, so that nothing runs on after the test.
    if (!completed) {
      await runVirtualTime(scheduler, { until: scheduler.frame + (options.gracePeriod ?? 30_000), stopWhen: () => completed }).catch(() => undefined);
    }
    main.unsubscribe();
  }

  if (outputError !== undefined && !outcomesExpected) {
    const err = outputError.error;
    throw new Error(`the controller failed at ${outcomes.timeline.at(-1)?.frame ?? 0} ms: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  if (recorder.refused.length > 0) {
    throw new AssertionError({
      message: `the reconcile recorded Events that the real recorder refuses: ${recorder.refused.map((r) => `at ${r.at} ms: ${r.error}`).join('; ')}`,
    });
  }
  for (const check of checks) check();

  return {
    outcomes: outcomes.timeline.flatMap((m) => (m.notification.kind === 'N' ? [{ ...m.notification.value, at: m.frame }] : [])),
    ...(outputError !== undefined ? { error: outputError.error } : {}),
    writes: client.writes,
    requests: client.requests,
    events: recorder.events,
    client,
    recorder,
    controller: ctl,
    frame: stop.frame,
    stoppedBy,
  };
}
