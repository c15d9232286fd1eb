import type { SchedulerLike } from 'rxjs';
import { AsyncAction } from 'rxjs/internal/scheduler/AsyncAction';
import { AsyncScheduler } from 'rxjs/internal/scheduler/AsyncScheduler';
import type { TimerHandle } from 'rxjs/internal/scheduler/timerHandle';

/**
 * A scheduler on which time runs `factor` times faster than on the wall
 * clock: a 1 s wait takes 10 ms at factor 100, and `now()` moves 100 ms
 * per real ms. For integration tests over real HTTP, where virtual time
 * cannot drive the sockets but the code under test must still see the
 * delays it asked for (a Retry-After of 1 s is still 1000 in its eyes).
 */
class DilatedScheduler extends AsyncScheduler {
  constructor(readonly factor: number) {
    super(DilatedAction, () => Date.now() * factor);
  }
}

class DilatedAction<T> extends AsyncAction<T> {
  protected override requestAsyncId(scheduler: AsyncScheduler, id?: TimerHandle, delay = 0): TimerHandle {
    return super.requestAsyncId(scheduler, id, delay / (scheduler as DilatedScheduler).factor);
  }
}

export function dilatedScheduler(factor = 100): SchedulerLike {
  return new DilatedScheduler(factor);
}
