import { asapScheduler, type SchedulerAction, type SchedulerLike, type Subscription } from 'rxjs';

/**
 * A scheduler for I/O code that waits between retries: it records every
 * delay asked for and runs the work on the next microtask instead, with its
 * clock moved on by the delay. Tests assert the waits (a Retry-After of 2 s
 * is a 2000 ms delay) without sleeping through them.
 */
export class RecordingScheduler implements SchedulerLike {
  readonly delays: number[] = [];
  private clock = 0;

  now(): number {
    return this.clock;
  }

  schedule<T>(work: (this: SchedulerAction<T>, state: T) => void, delay = 0, state?: T): Subscription {
    this.delays.push(delay);
    const move = (): void => {
      this.clock += delay;
    };
    return asapScheduler.schedule<T>(
      function (this: SchedulerAction<T>, s) {
        move();
        return work.call(this, s as T);
      },
      0,
      state,
    );
  }

  /** Moves the clock; the next waits are timed from there. */
  advance(ms: number): void {
    this.clock += ms;
  }
}
