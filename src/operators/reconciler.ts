import { from, isObservable, type ObservableInput, type Subscription } from 'rxjs';
import type { ObjectKey } from '../types.js';

/**
 * What a reconcile asks for when it succeeds (controller-runtime's `Result`).
 * - `requeueAfter` (ms, > 0): run the key again after that delay and forget
 *   its failure count. It wins over `requeue`.
 * - `requeue: true`: run the key again after the rate limiter's delay,
 *   counted like a failure for the backoff (outcome `'requeue'`).
 * Nothing, or `{}`, means done until the next trigger.
 */
export interface ReconcileResult {
  /** Run the key again after the rate limiter's delay, counted as a failure for the backoff. */
  requeue?: boolean;
  /** Run the key again after this many ms (> 0), forgetting its failure count; wins over `requeue`. */
  requeueAfter?: number;
}

/** What a reconcile gets besides its key. */
export interface ReconcileContext {
  /**
   * Aborted when the reconcile times out (reason: a `ReconcileTimeoutError`)
   * or the pipeline is unsubscribed (reason: an `AbortError`). Pass it to
   * every request the reconcile makes so that it stops with them.
   */
  readonly signal: AbortSignal;
  /** 0 for the first run after a success; n for the nth rate-limited retry in a row. */
  readonly attempt: number;
  /** The key this run is for. */
  readonly key: ObjectKey;
}

/**
 * Brings the state of one object in line with what it should be. It may
 * return its result as a plain value, a promise, or any `ObservableInput`
 * (the last value counts; completion ends the run). Throwing, rejecting and
 * erroring are failures, retried after the rate limiter's delay, except a
 * `TerminalError`, which is not retried.
 *
 * A promise may also resolve to an `ObservableInput`, which then runs as if
 * returned directly: so `async (key, ctx) => base(key, ctx)` wraps any
 * reconciler, whatever form it returns, without a cast.
 */
export type Reconciler = (
  key: ObjectKey,
  ctx: ReconcileContext,
) =>
  | ReconcileResult
  | void
  | ObservableInput<ReconcileResult | void>
  | PromiseLike<ReconcileResult | void | ObservableInput<ReconcileResult | void>>;

/** The failure of a reconcile that ran longer than its `timeout`; also the reason its signal gives. */
export class ReconcileTimeoutError extends Error {
  /** `TimeoutError`, as the reason of an aborted `AbortSignal.timeout()` is named. */
  override readonly name = 'TimeoutError';
  constructor(
    /** The key whose run timed out. */
    readonly key: ObjectKey,
    /** The timeout it exceeded, in ms. */
    readonly timeout: number,
  ) {
    super(`reconcile of "${key}" timed out after ${timeout} ms`);
  }
}

/**
 * A failure that retrying will not fix (controller-runtime's
 * `reconcile.TerminalError`): an object whose spec can never be met as
 * written, say. A reconcile that throws (or rejects, or errors with) one
 * ends with outcome `dropped`: it is logged and counted
 * (`controller_runtime_terminal_reconcile_errors_total`, besides the
 * error counters), its failure count is forgotten, and no rate-limited
 * retry follows. The key runs again at its next trigger (a change of the
 * object, a resync), or at once if it was triggered during the failed run.
 *
 * An error whose `cause` chain holds a `TerminalError` counts as one, as
 * Go's `errors.Is` sees through wrapping: a helper's terminal failure stays
 * terminal when the reconcile adds context to it.
 */
export class TerminalError extends Error {
  /** Always `TerminalError`, to tell this error apart without `instanceof`. */
  override readonly name = 'TerminalError';
}

/** How many `cause` links `isTerminal` follows: a cycle of causes must not hang the queue. */
const MAX_CAUSES = 16;

/** Whether a failure is a `TerminalError`, or wraps one through `cause`. */
export function isTerminal(error: unknown): boolean {
  let e = error;
  for (let i = 0; i < MAX_CAUSES && e instanceof Error; i++) {
    if (e instanceof TerminalError) return true;
    e = e.cause;
  }
  return false;
}

/**
 * What the metrics tell apart in a failure, besides its being one:
 * - `timeout`: the run outlived `timeout` (controller_runtime_reconcile_timeouts_total).
 * - `panic`: the JavaScript counterpart of a Go panic that controller-runtime
 *   recovers and counts (controller_runtime_reconcile_panics_total): the
 *   reconcile threw something that is not an `Error` (a string, `undefined`,
 *   a plain object), or one of the errors the engine itself throws for a bug
 *   (`TypeError`, `ReferenceError`, `RangeError`, `SyntaxError`, `EvalError`,
 *   `URIError`: reading a property of `undefined`, calling what is not a
 *   function, unbounded recursion), exactly of that class and with no
 *   `cause`. The engine never sets a cause, while a library that turns a
 *   failure into one of these does (`fetch` rejects with `TypeError: fetch
 *   failed` and the network error as its cause), so a refused connection
 *   is an error, not a panic. Subclasses are errors a program chose to throw.
 * - `terminal`: a `TerminalError` (see there).
 */
export type FailureKind = 'timeout' | 'panic' | 'terminal';

const engineErrors: ReadonlySet<unknown> = new Set([TypeError, ReferenceError, RangeError, SyntaxError, EvalError, URIError]);

/** The kind of a failure the reconcile itself produced, if it is one of the kinds `FailureKind` names. */
export function failureKind(error: unknown): FailureKind | undefined {
  if (error instanceof ReconcileTimeoutError) return 'timeout';
  if (isTerminal(error)) return 'terminal';
  if (!(error instanceof Error)) return 'panic';
  return engineErrors.has(Object.getPrototypeOf(error)?.constructor) && error.cause === undefined ? 'panic' : undefined;
}

/**
 * The context of one run, and the handle that ends it. The `AbortController`
 * is made on the first read of `signal`, not per run: most reconciles that
 * finish at once never look at it, and making one costs more than the rest of
 * a run of the workqueue.
 */
export class RunContext implements ReconcileContext {
  #controller: AbortController | undefined;
  #aborted = false;
  #reason: unknown;
  #subscription: Subscription | undefined;

  constructor(
    readonly key: ObjectKey,
    readonly attempt: number,
  ) {}

  get signal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /**
   * Ends the run for the reconcile: aborts the signal (now if it was read,
   * else as soon as it is; no reason means an `AbortError`), then
   * unsubscribes an observable reconcile. Abort listeners run first, so a
   * reconcile that reports its end on abort still does.
   */
  abort(reason?: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason = reason;
    this.#controller?.abort(reason);
    this.release();
  }

  /**
   * Lets go of an observable reconcile: unsubscribes it, so that its
   * finalizers have run before the key can run again (nothing once they have).
   */
  release(): void {
    const subscription = this.#subscription;
    this.#subscription = undefined;
    subscription?.unsubscribe();
  }

  /** Keeps the subscription of an observable reconcile, to end with the run; ends it at once if the run already was. */
  hold(subscription: Subscription): void {
    if (this.#aborted) subscription.unsubscribe();
    else this.#subscription = subscription;
  }
}

/** How a run ended: `failed` with the error as `value`, or not, with what the reconcile produced. */
export type RunReport = (ctx: RunContext, failed: boolean, value: unknown) => void;

/** Whether a value a reconcile produced is to be run as an `ObservableInput` (an Observable, iterable, stream, …). */
export function isObservableInput(value: object): value is ObservableInput<unknown> {
  return (
    isObservable(value) ||
    Symbol.iterator in value ||
    Symbol.asyncIterator in value ||
    (typeof Symbol.observable === 'symbol' && Symbol.observable in value) ||
    '@@observable' in value ||
    typeof (value as { getReader?: unknown }).getReader === 'function'
  );
}

/**
 * Calls the reconciler once and reports how it ended, through `report`,
 * synchronously when it returned a plain value, threw, or its observable
 * finished during subscription. The subscription of an observable result is
 * kept by `ctx`, so that `ctx.abort()` cancels it. Reports after a
 * cancellation or a timeout are the caller's to ignore: a promise cannot be
 * called back.
 */
export function startRun(reconcile: Reconciler, ctx: RunContext, report: RunReport): void {
  let value: unknown;
  try {
    value = reconcile(ctx.key, ctx);
  } catch (error) {
    report(ctx, true, error);
    return;
  }
  if (value !== null && typeof value === 'object' && typeof (value as PromiseLike<unknown>).then === 'function') {
    (value as PromiseLike<unknown>).then(
      (result) => settle(ctx, result, report),
      (error: unknown) => report(ctx, true, error),
    );
    return;
  }
  settle(ctx, value, report);
}

/** Reports a value a reconcile produced, running it first if it is an `ObservableInput`. */
function settle(ctx: RunContext, value: unknown, report: RunReport): void {
  if (value === undefined || value === null || typeof value !== 'object') {
    report(ctx, false, value);
    return;
  }
  if (!isObservableInput(value)) {
    report(ctx, false, value);
    return;
  }
  let last: unknown;
  const subscription = from(value).subscribe({
    next: (v) => {
      last = v;
    },
    error: (error: unknown) => report(ctx, true, error),
    complete: () => report(ctx, false, last),
  });
  if (!subscription.closed) ctx.hold(subscription);
}

/** The instructions in a result, or the error that says why it is not one. */
export type ReadResult = { requeue: boolean; requeueAfter: number } | { invalid: TypeError };

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object' && value !== null) return 'an object';
  return String(value);
}

/** The field that a misspelt property of a result was most likely meant to be, if it looks like one. */
function meant(name: string): string {
  const lower = name.toLowerCase();
  if (lower.includes('after') || lower.includes('delay')) return ' (did you mean requeueAfter?)';
  return lower.startsWith('requeue') ? ' (did you mean requeue?)' : '';
}

function describeObject(value: object): string {
  const { kind, metadata } = value as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } };
  const name = typeof metadata?.name === 'string' ? (typeof metadata.namespace === 'string' ? `${metadata.namespace}/${metadata.name}` : metadata.name) : '';
  return [typeof kind === 'string' ? kind : 'object', name].filter(Boolean).join(' ');
}

/**
 * Reads what a reconcile returned. A result it cannot act on is a failure
 * with a message naming it, rather than something ignored: a typo in
 * `requeueAfter` (`requeueafter`, `requeueAfterMs`, which TypeScript accepts
 * once the object is widened) must not silently stop a periodic requeue.
 */
export function readResult(key: ObjectKey, value: unknown): ReadResult {
  if (value === undefined || value === null) return { requeue: false, requeueAfter: 0 };
  if (typeof value !== 'object' || Array.isArray(value)) {
    return {
      invalid: new TypeError(
        `reconcile of "${key}" returned ${describe(value)}; expected nothing or { requeue?: boolean, requeueAfter?: ms }`,
      ),
    };
  }
  if ('metadata' in value && 'apiVersion' in value) {
    // The usual slip: `return ctx.client.patchStatus(...)`, which resolves to the written object.
    return {
      invalid: new TypeError(
        `reconcile of "${key}" returned a Kubernetes object (${describeObject(value)}), not a result; ` +
          'expected nothing or { requeue?: boolean, requeueAfter?: ms } (await the write instead of returning it)',
      ),
    };
  }
  const { requeue, requeueAfter } = value as ReconcileResult;
  if (requeue !== undefined && typeof requeue !== 'boolean') {
    return { invalid: new TypeError(`reconcile of "${key}" returned requeue: ${describe(requeue)}; expected a boolean`) };
  }
  if (requeueAfter !== undefined && (typeof requeueAfter !== 'number' || !(requeueAfter >= 0) || requeueAfter === Infinity)) {
    return {
      invalid: new TypeError(
        `reconcile of "${key}" returned requeueAfter: ${describe(requeueAfter)}; expected a finite number of ms >= 0`,
      ),
    };
  }
  for (const name in value) {
    if (name !== 'requeue' && name !== 'requeueAfter' && Object.hasOwn(value, name)) {
      return {
        invalid: new TypeError(
          `reconcile of "${key}" returned an unknown property ${JSON.stringify(name)}${meant(name)}; ` +
            'expected nothing or { requeue?: boolean, requeueAfter?: ms }',
        ),
      };
    }
  }
  return { requeue: requeue === true, requeueAfter: requeueAfter ?? 0 };
}
