import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SoakReport } from './report.js';

/** Writes the report as JSON to `<dir>/report-<timestamp>.json`; returns the path. */
export async function writeReport(report: SoakReport, dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, `report-${report.startedAt.replace(/[:.]/g, '-')}.json`);
  await writeFile(path, `${JSON.stringify(report, null, 2)}\n`);
  return path;
}
