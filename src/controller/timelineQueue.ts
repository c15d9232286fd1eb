import type { WorkqueueObserver } from '../operators/workqueueObserver.js';
import type { TimelineHub } from './timelineHub.js';

/**
 * The controller's workqueue observer: `inner` (the metrics) as it was,
 * and the timeline's queue entries (`waiting`, `delayed` with its delay
 * and reason, `idle`) and runs (`run-start`, which is also the move to
 * running, and `run-end`) besides. The timeline is told first, so that a
 * throwing `inner` (which the queue logs and ignores) costs no entry.
 *
 * The queue calls its hooks several times per reconcile, so none costs
 * more than it must: a hook only `inner` has is `inner`'s own (bound to
 * it), and a timeline hook calls `inner` only when `inner` has that hook.
 * With no timeline subscriber, a timeline hook then costs one check.
 */
export function timelineObserver(hub: TimelineHub, inner: WorkqueueObserver): WorkqueueObserver {
  const { started, waiting, ended, delayed, idle } = inner;
  return {
    ...passed(inner, 'added'),
    ...passed(inner, 'depth'),
    ...passed(inner, 'finished'),
    ...passed(inner, 'retried'),
    ...passed(inner, 'activeWorkers'),
    started:
      started === undefined
        ? (key, _queuedMs, attempt) => hub.runStart(key, attempt)
        : (key, queuedMs, attempt) => {
            hub.runStart(key, attempt);
            started.call(inner, key, queuedMs, attempt);
          },
    waiting:
      waiting === undefined
        ? (key) => hub.queue(key, 'waiting')
        : (key) => {
            hub.queue(key, 'waiting');
            waiting.call(inner, key);
          },
    ended:
      ended === undefined
        ? (outcome, requeueAfter) => hub.runEnd(outcome, requeueAfter)
        : (outcome, requeueAfter) => {
            hub.runEnd(outcome, requeueAfter);
            ended.call(inner, outcome, requeueAfter);
          },
    delayed:
      delayed === undefined
        ? (key, delayMs, reason) => hub.delayed(key, delayMs, reason)
        : (key, delayMs, reason) => {
            hub.delayed(key, delayMs, reason);
            delayed.call(inner, key, delayMs, reason);
          },
    idle:
      idle === undefined
        ? (key) => hub.queue(key, 'idle')
        : (key) => {
            hub.queue(key, 'idle');
            idle.call(inner, key);
          },
  };
}

type PassedHook = 'added' | 'depth' | 'finished' | 'retried' | 'activeWorkers';

/** `inner`'s hook `name`, bound to it, or nothing when it has none (the queue then skips it). */
function passed<K extends PassedHook>(inner: WorkqueueObserver, name: K): Pick<WorkqueueObserver, K> {
  const hook = inner[name];
  return (hook === undefined ? {} : { [name]: hook.bind(inner) }) as Pick<WorkqueueObserver, K>;
}
