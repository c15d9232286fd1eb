#!/usr/bin/env node
// `npm test`: the whole suite as two mocha processes side by side, then one
// totals line for both. The packed-package tests spend their minutes in child
// processes (npm install, tsc, the built CLI) that use one core, so on a
// two-core machine the rest of the suite runs beside them instead of after them.
// The object fuzz goes with them to even out the two halves.
// Arguments (`npm test -- test/x.test.ts --grep y`) run one plain mocha instead.
// The second half's output is held and printed after the first's, so that
// neither interleaves with the other.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const mocha = fileURLToPath(new URL('../node_modules/mocha/bin/mocha.js', import.meta.url));
const beside = ['test/package/**/*.test.ts', 'test/fuzz/objects.fuzz.test.ts'];
const everything = ['test/**/*.test.ts', 'examples/**/*.test.ts'];
const totals = /^(\d+) passed, (\d+) failed(?:, (\d+) skipped)?$/;

const children = new Set();
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    for (const child of children) child.kill(signal);
    process.exitCode = 130;
  });
}

/** Runs mocha with `args`; `live` streams its output, otherwise it is returned at the end. */
function run(args, live) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [mocha, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    const held = [];
    let last = '';
    const take = (out) => (chunk) => {
      last = (last + chunk.toString('utf8')).slice(-4096);
      if (live) out.write(chunk);
      else held.push(chunk);
    };
    child.stdout.on('data', take(process.stdout));
    child.stderr.on('data', take(process.stderr));
    child.on('error', (err) => held.push(Buffer.from(`\ncould not start mocha: ${err.message}\n`)));
    child.on('close', (code, signal) => {
      children.delete(child);
      const line = last.trimEnd().split('\n').map((l) => l.trim()).reverse().find((l) => totals.test(l));
      resolve({ code, signal, line, output: Buffer.concat(held) });
    });
  });
}

/** The counts of a half; a half that printed no totals line counts as one failure. */
function count(half, name) {
  const match = half.line && totals.exec(half.line);
  if (!match) {
    process.stdout.write(`\nthe ${name} ended (${half.signal ?? `exit ${half.code}`}) without its totals line: counted as 1 failed\n`);
    return { passed: 0, failed: 1, skipped: 0 };
  }
  const failed = Number(match[2]) + (half.code !== 0 && Number(match[2]) === 0 ? 1 : 0);
  return { passed: Number(match[1]), failed, skipped: Number(match[3] ?? 0) };
}

const extra = process.argv.slice(2);
if (extra.length > 0) {
  const only = await run(extra, true);
  process.exitCode = only.code ?? 1;
} else {
  const ignore = beside.flatMap((glob) => ['--ignore', glob]);
  const [main, side] = await Promise.all([run([...everything, ...ignore], true), run(beside, false)]);
  process.stdout.write(`\n--- the packed-package tests and the object fuzz (run beside the rest) ---\n`);
  process.stdout.write(side.output);
  const a = count(main, 'main half');
  const b = count(side, 'packed-package half');
  const passed = a.passed + b.passed;
  const failed = a.failed + b.failed;
  const skipped = a.skipped + b.skipped;
  process.stdout.write(`\n${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`);
  if (process.exitCode === undefined) process.exitCode = failed > 0 ? 1 : 0;
}
