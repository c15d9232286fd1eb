import { interval, type SchedulerLike } from 'rxjs';
import type { Logger } from '../logger.js';

export interface IdleWatchdog {
  /** Something arrived: the idle period starts over. */
  touch(): void;
  /** Whether the watchdog has fired. */
  idle(): boolean;
  /** No more checks (the request is over). */
  stop(): void;
}

/**
 * Calls `onIdle` once nothing has been `touch`ed for `idleTimeout` ms, and
 * logs it. Checked a few times per idle period rather than re-armed per
 * chunk: a busy watch gets thousands of chunks a second.
 */
export function idleWatchdog(
  verb: 'list' | 'watch',
  options: { idleTimeout: number; scheduler: SchedulerLike; logger: Logger; resource: string },
  onIdle: () => void,
): IdleWatchdog {
  const { idleTimeout, scheduler, logger, resource } = options;
  let lastActivity = scheduler.now();
  let idle = false;
  const check = interval(Math.max(1, idleTimeout / 4), scheduler).subscribe(() => {
    if (scheduler.now() - lastActivity < idleTimeout) return;
    logger.warn({ resource, idleTimeout }, `${verb} silent for too long; ${verb === 'watch' ? 'reopening it' : 'retrying it'}`);
    idle = true;
    check.unsubscribe();
    onIdle();
  });
  return {
    touch: () => {
      lastActivity = scheduler.now();
    },
    idle: () => idle,
    stop: () => check.unsubscribe(),
  };
}
