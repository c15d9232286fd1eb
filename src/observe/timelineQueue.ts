import type { WorkqueueObserver } from '../operators/workqueueObserver.js';
import type { TimelineHub } from './timelineHub.js';

/**
 * The controller's workqueue observer: `inner` (the metrics) as it was,
 * and the timeline's queue entries (`waiting`, `delayed` with its delay
 * and reason, `idle`) and runs (`run-start`, which is also the move to
 * running, and `run-end`) besides. The timeline is told first, so that a
 * throwing `inner` (which the queue logs and ignores) costs no entry. With
 * no timeline subscriber, each hook costs `inner`'s call and one check.
 */
export function timelineObserver(hub: TimelineHub, inner: WorkqueueObserver): WorkqueueObserver {
  return {
    added: (key) => inner.added?.(key),
    depth: (n) => inner.depth?.(n),
    priorityDepth: (priority, n) => inner.priorityDepth?.(priority, n),
    finished: (key, workMs) => inner.finished?.(key, workMs),
    retried: (key) => inner.retried?.(key),
    activeWorkers: (n) => inner.activeWorkers?.(n),
    started: (key, queuedMs, attempt) => {
      hub.runStart(key, attempt, queuedMs);
      inner.started?.(key, queuedMs, attempt);
    },
    waiting: (key) => {
      hub.queue(key, 'waiting');
      inner.waiting?.(key);
    },
    ended: (outcome, requeueAfter) => {
      hub.runEnd(outcome, requeueAfter);
      inner.ended?.(outcome, requeueAfter);
    },
    delayed: (key, delayMs, reason) => {
      hub.delayed(key, delayMs, reason);
      inner.delayed?.(key, delayMs, reason);
    },
    idle: (key) => {
      hub.queue(key, 'idle');
      inner.idle?.(key);
    },
  };
}
