/**
 * The public API report: what `rxkube`, `rxkube/testing` and
 * `rxkube/apiserver` export, every name and every shape a caller can reach
 * through them, written by api-extractor into `api/*.api.md`.
 *
 *   npm run api:report            writes the reports anew (after a deliberate change of the API)
 *   npm run api:report -- --check fails if the exported surface differs from the reports (npm test runs this)
 *
 * It builds the declaration files into a temporary folder first, so it
 * needs no `npm run build` and leaves no `dist/` behind.
 *
 * It also fails on every symbol the reports reach (exports, their members,
 * options and constructor fields) that has no doc comment of its own,
 * one line per symbol naming it and its source file (api-extractor's
 * `ae-undocumented`).
 */
import { Extractor, ExtractorConfig, ExtractorLogLevel, type ExtractorMessage } from '@microsoft/api-extractor';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify, parseArgs } from 'node:util';

const root = new URL('..', import.meta.url).pathname;

/** Each public entry, and the file its report goes to. */
export const entries = [
  { entry: 'index.d.ts', report: 'rxkube.api.md' },
  { entry: 'testing/index.d.ts', report: 'rxkube-testing.api.md' },
  { entry: 'apiserver/index.d.ts', report: 'rxkube-apiserver.api.md' },
  { entry: 'sinks/webhooks/index.d.ts', report: 'rxkube-webhooks.api.md' },
  { entry: 'kinds/index.d.ts', report: 'rxkube-kinds.api.md' },
] as const;

export interface ReportResult {
  /** Reports that differ from what the code exports (with `check`), or were rewritten. */
  changed: string[];
  /** api-extractor's errors, one line each. */
  errors: string[];
}

async function buildDeclarations(out: string): Promise<void> {
  const tsc = join(root, 'node_modules/typescript/bin/tsc');
  await promisify(execFile)(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--emitDeclarationOnly', '--declarationMap', 'false', '--outDir', out], { cwd: root }).catch(
    (err: { stdout?: string }) => {
      throw new Error(`building the declarations failed:\n${err.stdout ?? String(err)}`);
    },
  );
}

/**
 * Which symbol lacks a doc comment, and where its source is: api-extractor
 * reads the built declarations, whose paths and names mirror src/.
 */
function undocumented(message: ExtractorMessage, out: string): string {
  const name = /"([^"]+)"/.exec(message.text)?.[1] ?? message.text;
  const source = message.sourceFilePath === undefined ? undefined : relative(out, message.sourceFilePath).replace(/\.d\.ts$/, '.ts');
  const where = source === undefined || source.startsWith('..') ? '' : ` (src/${source}, near line ${message.sourceFileLine ?? '?'} of its declaration file)`;
  return `${name} has no doc comment${where}: write a /** ... */ comment on the declaration itself, saying what it is for`;
}

/** Runs api-extractor over every entry: with `check`, compares; otherwise writes the reports. */
export async function apiReport(options: { check: boolean }): Promise<ReportResult> {
  const out = await mkdtemp(join(tmpdir(), 'rxkube-api-'));
  const result: ReportResult = { changed: [], errors: [] };
  try {
    await buildDeclarations(out);
    for (const { entry, report } of entries) {
      const config = ExtractorConfig.prepare({
        configObject: {
          projectFolder: root,
          mainEntryPointFilePath: join(out, entry),
          compiler: { tsconfigFilePath: join(root, 'tsconfig.build.json') },
          apiReport: {
            enabled: true,
            reportFolder: join(root, 'api'),
            reportTempFolder: join(out, 'report'),
            reportFileName: report,
            // Shapes reachable from an export but not named by one are part of the surface too.
            includeForgottenExports: true,
          },
          docModel: { enabled: false },
          dtsRollup: { enabled: false },
          tsdocMetadata: { enabled: false },
          newlineKind: 'lf',
          messages: {
            compilerMessageReporting: { default: { logLevel: ExtractorLogLevel.Warning } },
            extractorMessageReporting: {
              default: { logLevel: ExtractorLogLevel.Warning },
              // No release tags (@public, @beta): every export is public.
              'ae-missing-release-tag': { logLevel: ExtractorLogLevel.None },
              // Reachable but unnamed shapes are reported (includeForgottenExports), by design.
              'ae-forgotten-export': { logLevel: ExtractorLogLevel.None },
              // Every export, and every member and option of one, has a doc comment of its own.
              'ae-undocumented': { logLevel: ExtractorLogLevel.Warning },
            },
            tsdocMessageReporting: { default: { logLevel: ExtractorLogLevel.None } },
          },
        },
        configObjectFullPath: join(root, 'api', 'api-extractor.json'),
        packageJsonFullPath: join(root, 'package.json'),
      });
      const outcome = Extractor.invoke(config, {
        localBuild: !options.check,
        showVerboseMessages: false,
        messageCallback: (message: ExtractorMessage) => {
          if (message.logLevel === ExtractorLogLevel.Error || message.logLevel === ExtractorLogLevel.Warning) {
            if (message.messageId === 'ae-undocumented') {
              result.errors.push(`${report}: ${undocumented(message, out)}`);
            } else if (!String(message.messageId).startsWith('console-api-report')) {
              result.errors.push(`${report}: ${message.text}`);
            }
          }
          message.handled = true;
        },
      });
      if (outcome.apiReportChanged) result.changed.push(report);
    }
  } finally {
    await rm(out, { recursive: true, force: true });
  }
  return result;
}

if (process.argv[1] !== undefined && import.meta.url.endsWith(process.argv[1].replace(/^.*\/scripts\//, '/scripts/'))) {
  const { values } = parseArgs({ options: { check: { type: 'boolean', default: false } }, strict: true });
  const result = await apiReport({ check: values.check });
  for (const line of result.errors) console.error(line);
  if (values.check && result.changed.length > 0) {
    console.error(`the exported API differs from ${result.changed.map((r) => `api/${r}`).join(', ')}: review the change, then run npm run api:report`);
  } else if (!values.check) {
    console.log(result.changed.length === 0 ? 'the API reports are up to date' : `wrote ${result.changed.map((r) => `api/${r}`).join(', ')}`);
  }
  process.exitCode = result.errors.length > 0 || (values.check && result.changed.length > 0) ? 1 : 0;
}
