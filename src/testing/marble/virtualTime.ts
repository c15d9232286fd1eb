import type { VirtualTimeScheduler } from 'rxjs';

/**
 * Lets every pending microtask run: promise chains (an `async` reconcile,
 * the memory client's answers) go as far as they can without time passing.
 * One turn of the event loop is enough for microtasks, which all run before
 * the next macrotask.
 */
export function settle(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}

/** Where a run of virtual time stopped. */
export interface VirtualTimeStop {
  /** `idle`: nothing was left to do; `until`: the time limit came first; `stopped`: `stopWhen` said so. */
  reason: 'idle' | 'until' | 'stopped';
  /** The virtual time reached (ms). */
  frame: number;
  /** Actions executed. */
  steps: number;
}

/** How long `runVirtualTime` runs a TestScheduler, and what ends it. */
export interface RunVirtualTimeOptions {
  /** Stop before any action due after this time (ms); the clock is then set to it. */
  until?: number;
  /** Give up (throw) when still busy past this time (ms): a loop that never ends, say. */
  maxTime?: number;
  /** Give up (throw) after this many actions. */
  maxSteps?: number;
  /** Called after each step, once microtasks have settled; a thrown error ends the run. */
  afterStep?: () => void;
  /** Checked after each step, once microtasks have settled: true ends the run there. */
  stopWhen?: () => boolean;
}

/**
 * Advances a `VirtualTimeScheduler` (a `TestScheduler`) one scheduled
 * action at a time, letting microtasks settle before and after each, until
 * nothing is scheduled or `until` comes.
 *
 * Why not `flush()`: a synchronous flush runs every action of every frame
 * in one go, so a promise that an action resolves settles only after the
 * flush, at the end of virtual time. Run one action at a time, and a
 * reconcile's `await` resumes at the virtual time its promise resolved, as
 * it would under the real clock, where each timer is its own macrotask.
 */
export async function runVirtualTime(scheduler: VirtualTimeScheduler, options: RunVirtualTimeOptions = {}): Promise<VirtualTimeStop> {
  const maxTime = options.maxTime ?? Infinity;
  const maxSteps = options.maxSteps ?? Infinity;
  for (let steps = 0; ; steps++) {
    await settle();
    options.afterStep?.();
    if (options.stopWhen?.() === true) return { reason: 'stopped', frame: scheduler.frame, steps };
    const next = scheduler.actions[0];
    if (next === undefined) return { reason: 'idle', frame: scheduler.frame, steps };
    if (options.until !== undefined && next.delay > options.until) {
      scheduler.frame = Math.max(scheduler.frame, options.until);
      return { reason: 'until', frame: scheduler.frame, steps };
    }
    if (next.delay > maxTime || steps >= maxSteps) {
      throw new Error(
        `virtual time is still busy after ${steps} actions at ${scheduler.frame} ms (the next is due at ${next.delay} ms, ` +
          `the limit is ${maxTime === Infinity ? '' : `${maxTime} ms and `}${maxSteps === Infinity ? 'no step limit' : `${maxSteps} actions`}): ` +
          'something reschedules itself forever (a reconcile that always requeues, a periodic timer); give the run an end with `until`',
      );
    }
    scheduler.actions.shift();
    scheduler.frame = next.delay;
    const error: unknown = next.execute(next.state, next.delay);
    if (error) throw error;
  }
}
