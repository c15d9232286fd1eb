import type { SchedulerLike } from 'rxjs';
import { AsyncAction } from 'rxjs/internal/scheduler/AsyncAction';
import { AsyncScheduler } from 'rxjs/internal/scheduler/AsyncScheduler';

/**
 * A scheduler that runs work on real timers (the page and the HTTP
 * server are real) but whose `now()` the test sets: what the live view
 * stamps and counts down from is then a value the test chose, not the
 * wall clock since some earlier step. Until `pin` is called it is the
 * wall clock.
 */
export function pinnedClock(): { scheduler: SchedulerLike; pin: (at: number) => void } {
  let pinned: number | undefined;
  return { scheduler: new AsyncScheduler(AsyncAction, () => pinned ?? Date.now()), pin: (at) => (pinned = at) };
}
