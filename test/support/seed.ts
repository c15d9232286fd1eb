import fc from 'fast-check';

/**
 * The one seed every randomized test in `npm test` draws from, so that a
 * run can be replayed exactly: fixed by default (the suite is the same on
 * every run and every machine), RXKUBE_SEED=<integer> to replay or explore
 * another, RXKUBE_SEED=random for a fresh one. It is printed at the start
 * of the run whenever it is not the default, and every check that uses it
 * names it in its failure message. fast-check's properties take it through
 * `fc.configureGlobal`, so a failing property prints this seed with its
 * path, and `fc.assert` never draws one from the clock.
 */
export const DEFAULT_SEED = 20_261_202;

function fromEnv(value: string | undefined): { seed: number; said: string } {
  if (value === undefined || value === '') return { seed: DEFAULT_SEED, said: 'default' };
  if (value === 'random') return { seed: Math.floor(Math.random() * 2 ** 31), said: 'RXKUBE_SEED=random' };
  const seed = Number(value);
  if (!Number.isSafeInteger(seed)) throw new RangeError(`RXKUBE_SEED must be an integer or "random", got "${value}"`);
  return { seed, said: `RXKUBE_SEED=${value}` };
}

const chosen = fromEnv(process.env.RXKUBE_SEED);
// A fresh seed is written back, so that child processes and a second load of this module agree on it.
process.env.RXKUBE_SEED = String(chosen.seed);

/** The run's seed (see the module's doc). */
export const testSeed: number = chosen.seed;

/** How to replay a failure: for assertion messages. */
export const replay = `seed ${testSeed} (replay with RXKUBE_SEED=${testSeed})`;

fc.configureGlobal({ seed: testSeed });
process.stdout.write(`randomized tests: ${replay}${chosen.said === 'default' ? ', the default' : `, from ${chosen.said}`}\n`);
