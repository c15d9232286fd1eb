import type { Registry } from 'prom-client';
import type { SchedulerLike } from 'rxjs';
import type { Logger } from '../logger.js';
import { ownWritesMetrics } from '../sinks/metrics/ownWritesMetrics.js';
import type { KubeObject } from '../types.js';
import { holdOwnWrites, type OwnWritesHold } from './holdOwnWrites.js';
import { OwnWrites } from './ownWrites.js';
import type { Wiring } from './wiring.js';

/** Read-your-own-writes, as `controller({ readYourWrites })` takes it. */
export interface ReadYourWritesOptions {
  /**
   * How long a key waits at most for the cache to show its own writes, in ms
   * after its last write (default 10 000; `Infinity` waits for ever). Past it
   * the key runs anyway, with a warning naming it and the objects unseen.
   */
  timeout?: number;
}

/** The wait's default bound: long enough for a watch under load, short enough that a lost event costs seconds, not the resync period. */
export const DEFAULT_OWN_WRITE_TIMEOUT = 10_000;

/** Read-your-own-writes of one controller: the writes it tracks, and the hold around its queue. */
export interface ReadYourWrites {
  readonly writes: OwnWrites;
  readonly hold: OwnWritesHold;
}

/**
 * The option as given: `true` is on with the defaults; `false` or nothing is
 * off (its cost on `npm run bench:storm` is not reliably under 5 %: see docs/read-your-writes.md).
 */
export function readYourWritesOption(option: boolean | ReadYourWritesOptions | undefined): ReadYourWritesOptions | undefined {
  if (option === false || option === undefined) return undefined;
  if (option === true) return {};
  if (option === null || typeof option !== 'object') throw new TypeError(`readYourWrites must be true, false or { timeout }, got ${String(option)}`);
  return option;
}

/** Read-your-own-writes over the stores of `wiring` (in the order of `wiring.all`), counted on `registry`. */
export function readYourWrites<T extends KubeObject>(
  options: ReadYourWritesOptions,
  wiring: Wiring<T>,
  parts: { controller: string; scheduler: SchedulerLike; logger: Logger; registry: Registry },
): ReadYourWrites {
  const stores = wiring.all.map(({ resource, informer }) => ({
    group: resource.group ?? '',
    kind: resource.kind,
    ...(resource.namespace !== undefined ? { namespace: resource.namespace } : {}),
    lister: informer.store,
  }));
  const writes = new OwnWrites(stores, parts.scheduler, options.timeout ?? DEFAULT_OWN_WRITE_TIMEOUT);
  const metrics = ownWritesMetrics(parts.registry, parts.controller);
  return { writes, hold: holdOwnWrites(writes, { scheduler: parts.scheduler, logger: parts.logger, waited: metrics.waited }) };
}
