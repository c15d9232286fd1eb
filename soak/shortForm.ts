import { soakDefaults, type SoakOptions } from './options.js';

/**
 * The short soak that `npm test` runs (about a minute on two cores): the
 * same controllers, workload, faults and checks as `npm run soak`, in two
 * rounds of faults (18 s and 22 s), so that the heap is compared between
 * two calm phases. A smaller watch history fills up within the first round,
 * as it does within the first minute of a long run.
 *
 * Its bounds do not depend on how busy the machine is: convergence after
 * the faults is bounded by progress (it fails after three of the informers'
 * longest backoffs with no reconcile and nothing fewer left, the 150 s
 * only guards against a hang), and takeovers are checked in the lease's
 * terms (see LeaderChaos). `npm run soak` keeps its 30 s bound, a figure
 * of the soak's on a machine it has to itself.
 */
export function shortSoakOptions(seed: number, progress: (line: string) => void = () => {}): SoakOptions {
  return {
    ...soakDefaults,
    rounds: 2,
    firstRoundMs: 18_000,
    roundMs: 22_000,
    historyWindow: 5_000,
    convergenceBoundMs: 150_000,
    convergenceStallMs: 3 * soakDefaults.watchBackoffMaxMs,
    seed,
    progress,
    progressMs: 10_000,
  };
}
