import { access } from 'node:fs/promises';
import { resolve } from 'node:path';
import { RecordingError } from '../../observe/recording/readRecording.js';
import type { KubeObject } from '../../types.js';
import { parseCommandLine, UsageError, type CliIo } from '../../util/cli.js';
import { importModule, TypeScriptLoaderMissing } from '../../util/importModule.js';
import { escapeTerminal } from '../../util/terminalText.js';
import { replayReport } from './compareRuns.js';
import { replay, type ReplayOptions } from './replay.js';

export const replayUsage = `usage: rxkube replay <recording> --reconcile <module> [--export <name>]

Replays a recording (made with runController({ record }), or npm start -- --record) in virtual
time with the reconcile that <module> exports, and compares each run with the recorded one.
Prints "N runs replayed, M differ", then each run that differs as two timelines, recorded and
replayed. Exit code 0 when none differs, 1 when some do, 2 for a bad command line, recording or
module.

The module (TypeScript through tsx, or JavaScript) exports the reconcile as \`reconcile\` (or as
the name --export gives): a function (key, ctx) => ..., as controller() takes it. It may also
export \`replayOptions\`: the rest of replay()'s options (predicates, rateLimiter, indexers,
concurrency, timeout, maxRetries), which a recording cannot hold because they are code.

options:
  --reconcile <module>   the module with the reconcile (required)
  --export <name>        the name of its export (default reconcile)
  -h, --help             show this help and exit
`;

function commandLine(args: string[]): { help: true } | { help: false; recording: string; module: string; exportName: string } {
  const { values, positionals } = parseCommandLine({ args, strict: true, allowPositionals: true, options: { reconcile: { type: 'string' }, export: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help === true) return { help: true };
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? 'needs the recording to replay' : `takes one recording, got ${positionals.length}: ${positionals.join(' ')}`);
  if (values.reconcile === undefined || values.reconcile === '') throw new UsageError('needs --reconcile <module>, the module that exports the reconcile');
  return { help: false, recording: positionals[0] as string, module: values.reconcile, exportName: values.export ?? 'reconcile' };
}

async function loadModule(path: string): Promise<Record<string, unknown>> {
  const file = resolve(path);
  try {
    await access(file);
  } catch {
    throw new UsageError(`--reconcile ${path}: no such file`);
  }
  try {
    return await importModule(file);
  } catch (err) {
    if (err instanceof TypeScriptLoaderMissing) throw new UsageError(`--reconcile: ${err.message}`);
    throw new UsageError(`--reconcile ${path}: the module failed to load: ${(err as Error).message}`);
  }
}

/**
 * `rxkube replay`: see `replayUsage`. Returns the exit code; never exits the
 * process. What it prints comes from the recording (Event notes, error
 * messages, keys) and the module: escaped as kubectl escapes what it prints.
 */
export async function replayCommand(args: string[], terminal: CliIo): Promise<number> {
  const io: CliIo = { ...terminal, out: (line) => terminal.out(escapeTerminal(line)), err: (line) => terminal.err(escapeTerminal(line)) };
  try {
    const line = commandLine(args);
    if (line.help) {
      io.out(replayUsage);
      return 0;
    }
    const module = await loadModule(line.module);
    const reconcile = module[line.exportName];
    if (typeof reconcile !== 'function') {
      const has = Object.keys(module).filter((k) => typeof module[k] === 'function');
      throw new UsageError(
        `--reconcile ${line.module} exports no function "${line.exportName}"${has.length > 0 ? ` (its functions: ${has.join(', ')}; choose one with --export)` : ''}`,
      );
    }
    const extra = module.replayOptions;
    if (extra !== undefined && (extra === null || typeof extra !== 'object')) throw new UsageError(`--reconcile ${line.module}: replayOptions must be an object of replay()'s options`);
    const options = { ...(extra as object | undefined), reconcile } as ReplayOptions<KubeObject>;
    const result = await replay(line.recording, options);
    for (const warning of result.warnings) io.err(`rxkube replay: warning: ${warning}`);
    io.out(replayReport(result));
    return result.differ === 0 && result.error === undefined ? 0 : 1;
  } catch (err) {
    if (err instanceof UsageError || err instanceof RecordingError) {
      io.err(`rxkube replay: ${err.message}\n(rxkube replay --help says what it takes)`);
      return 2;
    }
    io.err(`rxkube replay: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}
