/**
 * `npm run soak [-- --minutes N] [--seed S] [--rate R] [--report-dir D]`:
 * runs the soak for N minutes (default 10), prints progress and the report,
 * writes the report as JSON (default `.soak/`), and sets the exit code:
 * 0 when no invariant was violated, 1 otherwise, 2 for bad arguments.
 */
import { parseArgs } from 'node:util';
import { shardedDefaults, soakDefaults } from './options.js';
import { formatReport } from './printReport.js';
import { runSoak } from './soak.js';
import { writeReport } from './writeReport.js';

function number(name: string, value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new RangeError(`--${name} needs a positive number, got "${value}"`);
  return n;
}

let args;
try {
  const { values } = parseArgs({
    options: { sharded: { type: 'boolean' }, minutes: { type: 'string' }, seed: { type: 'string' }, rate: { type: 'string' }, 'report-dir': { type: 'string' } },
    strict: true,
  });
  args = {
    minutes: number('minutes', values.minutes, 10),
    seed: Math.floor(number('seed', values.seed, Math.floor(Math.random() * 2 ** 31) || 1)),
    rate: number('rate', values.rate, soakDefaults.rate),
    reportDir: values['report-dir'] ?? '.soak',
    sharded: values.sharded === true,
  };
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\nusage: npm run soak -- [--minutes N] [--seed S] [--rate ops/s] [--report-dir dir] [--sharded]\n`);
  process.exit(2);
}

if (typeof (globalThis as { gc?: unknown }).gc !== 'function') process.stderr.write('note: run with node --expose-gc (npm run soak does); gc is being enabled at run time\n');
const durationMs = args.minutes * 60_000;
process.stdout.write(`rxkube soak: ${args.minutes} min, seed ${args.seed}, ${args.rate} operations/s${args.sharded ? ', sharded' : ''}\n`);
const report = await runSoak({
  ...soakDefaults,
  durationMs,
  firstRoundMs: Math.min(soakDefaults.firstRoundMs, durationMs / 2),
  roundMs: Math.min(soakDefaults.roundMs, durationMs / 2),
  seed: args.seed,
  rate: args.rate,
  // --sharded: the sharding scenario instead of the leader-election one, in its namespace.
  ...(args.sharded ? { leader: undefined, sharded: shardedDefaults } : {}),
  progress: (line) => process.stdout.write(`${line}\n`),
});
const file = await writeReport(report, args.reportDir);
process.stdout.write(`\n${formatReport(report, file)}\n`);
process.exitCode = report.passed ? 0 : 1;
