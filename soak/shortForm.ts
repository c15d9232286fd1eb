import { soakDefaults, type SoakOptions } from './options.js';

/**
 * The short soak that `npm test` runs (about a minute on two cores): the
 * same controllers, workload, faults and checks as `npm run soak`, in two
 * rounds of faults (18 s and 22 s), so that the heap is compared between
 * two calm phases. A smaller watch history fills up within the first round,
 * as it does within the first minute of a long run.
 */
export function shortSoakOptions(seed: number, progress: (line: string) => void = () => {}): SoakOptions {
  return {
    ...soakDefaults,
    rounds: 2,
    firstRoundMs: 18_000,
    roundMs: 22_000,
    historyWindow: 5_000,
    seed,
    progress,
    progressMs: 10_000,
  };
}
