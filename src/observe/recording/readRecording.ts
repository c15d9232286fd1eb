import { readdir, readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import type { Logger } from '../../logger.js';
import type { TimelineEntry } from '../timeline.js';
import { entryProblem, optionsProblem } from './checkEntries.js';
import { rotatedParts } from './rotatedNames.js';
import { recordingFormat, recordingVersion, type Recording, type RecordingHeader } from './format.js';

/** A recording that cannot be read: the message names the file and line. */
export class RecordingError extends Error {
  /** `RecordingError`. */
  override readonly name = 'RecordingError';
}

/** The files of the recording at `path`, oldest first: `path.<n>` … `path.1`, then `path` itself. */
async function filesOf(path: string): Promise<string[]> {
  const base = basename(path);
  let names: string[];
  try {
    names = await readdir(dirname(path));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new RecordingError(`no recording at ${path}: the file does not exist`);
    throw new RecordingError(`cannot read the recording ${path}: ${(err as Error).message}`, { cause: err });
  }
  if (!names.includes(base)) throw new RecordingError(`no recording at ${path}: the file does not exist`);
  return [...rotatedParts(path, names).map((part) => part.file).reverse(), path];
}

function isHeader(value: Record<string, unknown>): boolean {
  return value.type === 'header' && value.format === recordingFormat;
}

function checkHeader(value: Record<string, unknown>, where: string): RecordingHeader {
  if (!isHeader(value)) throw new RecordingError(`${where}: not an rxkube recording (the first line is no "${recordingFormat}" header)`);
  if (value.version !== recordingVersion) {
    throw new RecordingError(`${where}: recording format version ${String(value.version)} is not supported (this rxkube reads version ${recordingVersion})`);
  }
  const options = value.options as Record<string, unknown> | undefined;
  if (typeof value.controller !== 'string' || typeof value.start !== 'number' || typeof options?.for !== 'object') {
    throw new RecordingError(`${where}: the header lacks its controller, start or options`);
  }
  const problem = optionsProblem(options);
  if (problem !== undefined) throw new RecordingError(`${where}: the header's ${problem}`);
  return value as unknown as RecordingHeader;
}

/** A line of a recording as JSON, with its number in its file (from 1). */
interface ReadLine {
  value: Record<string, unknown>;
  line: number;
}

/** One file's lines as JSON objects; the last line may be cut off (a crash mid-write) only where `mayBeCut`. */
function parseLines(file: string, text: string, mayBeCut: boolean, warnings: string[]): ReadLine[] {
  const lines = text.split('\n');
  // A file that ends with its newline leaves one empty string behind.
  const last = lines.pop() ?? '';
  const out: ReadLine[] = [];
  const parse = (line: string, n: number): ReadLine => {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new RecordingError(`${file}:${n}: not a JSON line (${(err as Error).message})`, { cause: err });
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value) || typeof (value as { type?: unknown }).type !== 'string') {
      throw new RecordingError(`${file}:${n}: not a timeline entry (an object with a "type")`);
    }
    return { value: value as Record<string, unknown>, line: n };
  };
  lines.forEach((line, i) => {
    if (line.trim() !== '') out.push(parse(line, i + 1));
  });
  if (last.trim() !== '') {
    try {
      out.push(parse(last, lines.length + 1));
    } catch (err) {
      if (!mayBeCut) throw err;
      warnings.push(`${file}:${lines.length + 1}: the last line is cut off (the recorder stopped mid-write); ignored`);
    }
  }
  return out;
}

/**
 * Reads a recording: `path` and its rotated files (`path.1`, `path.2`, …,
 * the highest the oldest), as one run of entries, oldest first.
 *
 * Tolerant where a crash leaves its mark: a cut-off last line of the
 * newest file is ignored with a warning naming the file and line. Strict
 * elsewhere: a line that is not JSON, a file without the header, a header
 * of another recording or format version, header options or an entry not
 * shaped as recorded (see `checkEntries`) is a `RecordingError` naming the
 * file and line. A recording whose first file was rotated away reads with
 * a warning (the informers' first lists went with it).
 */
export async function readRecording(path: string, options: { logger?: Logger } = {}): Promise<Recording> {
  const files = await filesOf(path);
  const warnings: string[] = [];
  const entries: TimelineEntry[] = [];
  const places: string[] = [];
  let first: RecordingHeader | undefined;
  for (const [i, file] of files.entries()) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (err) {
      throw new RecordingError(`cannot read ${file}: ${(err as Error).message}`, { cause: err });
    }
    const values = parseLines(file, text, i === files.length - 1, warnings);
    if (values.length === 0) throw new RecordingError(`${file}:1: empty, not an rxkube recording`);
    const header = checkHeader((values[0] as ReadLine).value, `${file}:${(values[0] as ReadLine).line}`);
    if (first === undefined) {
      first = header;
      if (header.part !== 0) warnings.push(`${file}: the recording's first ${header.part} file(s) were rotated away; it starts mid-run, without the informers' first lists`);
    } else if (header.controller !== first.controller || header.start !== first.start) {
      throw new RecordingError(`${file}:1: belongs to another recording (controller "${header.controller}" started at ${header.start}, not "${first.controller}" at ${first.start})`);
    }
    for (const { value, line } of values.slice(1)) {
      if (isHeader(value)) continue;
      const problem = entryProblem(value);
      if (problem !== undefined) throw new RecordingError(`${file}:${line}: ${problem}`);
      entries.push(value as unknown as TimelineEntry);
      places.push(`${file}:${line}`);
    }
  }
  for (const warning of warnings) options.logger?.warn({ path }, warning);
  return { header: first as RecordingHeader, entries, places, files, warnings };
}
