import type { SchedulerLike } from 'rxjs';
import { InProcessServer } from '../../apiserver/inProcessServer.js';

/**
 * The embedded API server in process, as the memory clients of this folder
 * run it: every timestamp from `scheduler`'s clock, uids counted
 * (`00000000-0000-4000-8000-000000000001`, …) so a test sees the same
 * objects on every run, follow-up work of its controllers (the garbage
 * collector's) scheduled on `scheduler`, and no Namespace needed for
 * namespaced objects.
 */
export function virtualServer(scheduler: SchedulerLike): InProcessServer {
  let uids = 0;
  return new InProcessServer({
    now: () => scheduler.now(),
    uid: () => `00000000-0000-4000-8000-${(++uids).toString(16).padStart(12, '0')}`,
    later: (run) => {
      const action = scheduler.schedule(run);
      return () => action.unsubscribe();
    },
    requireNamespaces: false,
  });
}
