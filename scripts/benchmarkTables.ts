/**
 * Refreshes docs/benchmarks.md: runs each named benchmark (`npm run
 * bench:<name>`), and writes what it printed as that benchmark's dated
 * table, between the page's `<!-- bench:<name> -->` and `<!-- /bench:<name> -->`
 * markers. Each line a benchmark prints becomes a row: its label, its
 * figure, and what follows (columns end at a run of two spaces, as every
 * bench here aligns them); a line without such a break is a heading row.
 *
 *   npm run bench:tables -- storm timeline     # those two
 *   npm run bench:tables                       # every benchmark with markers (an hour and more)
 *
 * Environment variables pass through, so `TIMELINE_ROUNDS=5 npm run
 * bench:tables -- timeline` shortens a run as it shortens the bench.
 */
import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const page = join(root, 'docs/benchmarks.md');

/** The rows of a benchmark's table, from what it printed. */
export function tableOf(output: string): string[] {
  const rows = ['| what | figure | against the references |', '| --- | --- | --- |'];
  for (const raw of output.split('\n')) {
    const line = raw.replace(/\x1b\[[0-9;]*m/g, '').trimEnd();
    if (line.trim() === '' || line.startsWith('>')) continue; // blank, or npm's banner
    const cell = (text: string): string => text.trim().replaceAll('|', '\\|');
    const [what, figure, ...rest] = line.trim().split(/\s{2,}/);
    rows.push(figure === undefined ? `| **${cell(what as string)}** | | |` : `| ${cell(what as string)} | ${cell(figure)} | ${cell(rest.join('; '))} |`);
  }
  return rows;
}

/** `text` with the part between the markers of `name` replaced by `body`; throws when the page has no such markers. */
export function replaceSection(text: string, name: string, body: string): string {
  const open = `<!-- bench:${name} -->`;
  const close = `<!-- /bench:${name} -->`;
  const start = text.indexOf(open);
  const end = text.indexOf(close);
  if (start < 0 || end < start) throw new Error(`docs/benchmarks.md has no ${open} … ${close} section`);
  return `${text.slice(0, start + open.length)}\n${body}\n${text.slice(end)}`;
}

async function runBench(name: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', `bench:${name}`], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      process.stdout.write(chunk);
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(output) : reject(new Error(`npm run bench:${name} exited with ${code}`))));
  });
}

async function main(): Promise<void> {
  let text = await readFile(page, 'utf8');
  const named = process.argv.slice(2);
  const names = named.length > 0 ? named : [...text.matchAll(/<!-- bench:([\w-]+) -->/g)].map((m) => m[1] as string);
  for (const name of names) {
    const output = await runBench(name);
    const date = new Date().toISOString().slice(0, 10);
    const machine = `Node ${process.version}, ${cpus().length} cores`;
    text = replaceSection(text, name, [`Measured ${date} on ${machine} by \`npm run bench:tables -- ${name}\`.`, '', ...tableOf(output)].join('\n'));
    await writeFile(page, text);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });
}
