import { readdir, rename, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Logger } from '../../logger.js';
import { openPrivateFile } from '../../util/privateFile.js';
import { rotatedParts, rotatedPath } from './rotatedNames.js';

/** How big the files of a recording grow and how many are kept. */
export interface RotationOptions {
  /** Bytes a file may reach before the next line goes to a new one (default 64 MiB). */
  maxBytes?: number;
  /** Files kept, the current one included: `path`, `path.1` … `path.<maxFiles - 1>` (default 5). */
  maxFiles?: number;
  /** Bytes of lines waiting to be written at most; lines beyond are dropped and counted (default 16 MiB). */
  maxBuffered?: number;
}

/** What a rotating file did, for the caller's log and tests. */
export interface RotatingFileStats {
  /** Lines written. */
  written: number;
  /** Lines dropped: the buffer was full (the disk too slow), or a write had failed. */
  dropped: number;
  /** Rotations made. */
  rotations: number;
}

/** A file of lines that rotates by size, written in the background. */
export interface RotatingFile {
  /** Queues a line (without its newline). Returns at once; never throws. */
  write(line: string): void;
  /** Resolves once every queued line is written (or dropped) and the file is closed. */
  close(): Promise<void>;
  stats(): RotatingFileStats;
}

export const defaultRotation = { maxBytes: 64 * 1024 * 1024, maxFiles: 5, maxBuffered: 16 * 1024 * 1024 } as const;

const batchBytes = 256 * 1024;

function positive(name: string, value: number): number {
  if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`record: ${name} must be a positive integer, got ${String(value)}`);
  return value;
}

async function removeIfThere(path: string): Promise<void> {
  await rm(path, { force: true });
}

/** The rotated files of an earlier recording at `path` (`path.1`, `path.2`, …), whatever its `maxFiles` was. */
async function staleParts(path: string): Promise<string[]> {
  const names = await readdir(dirname(path)).catch(() => [] as string[]);
  return rotatedParts(path, names).map((part) => part.file);
}

async function renameIfThere(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * Opens `path` for a new recording (removing a previous one's rotated
 * files, which would otherwise read as part of this one) and writes lines
 * to it one batch at a time, each awaited: the disk's pace is the
 * backpressure, and lines wait in memory up to `maxBuffered` bytes. When
 * the next line would take the file past `maxBytes`, the files shift
 * (`path` → `path.1` → `path.2` …, the oldest beyond `maxFiles` removed)
 * and a new `path` starts with `header(part)`. A failed write is logged
 * once and ends the recording (later lines are dropped and counted): the
 * controller goes on, unrecorded.
 */
export function rotatingFile(path: string, header: (part: number) => string, logger: Logger, options: RotationOptions = {}): RotatingFile {
  const maxBytes = positive('maxBytes', options.maxBytes ?? defaultRotation.maxBytes);
  const maxFiles = positive('maxFiles', options.maxFiles ?? defaultRotation.maxFiles);
  const maxBuffered = positive('maxBuffered', options.maxBuffered ?? defaultRotation.maxBuffered);
  const stats: RotatingFileStats = { written: 0, dropped: 0, rotations: 0 };
  const queue: string[] = [];
  let queuedBytes = 0;
  let file: FileHandle | undefined;
  let size = 0;
  let headerSize = 0;
  let part = 0;
  let failed = false;
  let closing = false;
  let pump: Promise<void> | undefined;
  let warnedFull = false;

  const startFile = async (): Promise<void> => {
    // Every part holds cached objects: readable by the owner only, whatever the umask or an earlier file's mode.
    file = await openPrivateFile(path);
    const first = `${header(part)}\n`;
    await file.write(first);
    size = headerSize = Buffer.byteLength(first);
  };

  const opening = (async () => {
    for (const stale of await staleParts(path)) await removeIfThere(stale);
    await startFile();
  })();

  const rotate = async (): Promise<void> => {
    await file?.close();
    file = undefined;
    await removeIfThere(rotatedPath(path, maxFiles - 1));
    for (let n = maxFiles - 2; n >= 0; n--) await renameIfThere(rotatedPath(path, n), rotatedPath(path, n + 1));
    part++;
    stats.rotations++;
    await startFile();
  };

  const drain = async (): Promise<void> => {
    await opening;
    while (queue.length > 0) {
      let batch = '';
      let batchSize = 0;
      let lines = 0;
      while (queue.length > 0) {
        const line = `${queue[0]}\n`;
        const bytes = Buffer.byteLength(line);
        // A line bigger than a whole file still gets a file of its own rather than being lost.
        if (size + batchSize + bytes > maxBytes && (batch !== '' || size > headerSize)) break;
        if (batch !== '' && batchSize + bytes > batchBytes) break;
        batch += line;
        batchSize += bytes;
        lines++;
        queue.shift();
        queuedBytes -= bytes - 1;
      }
      if (batch === '') {
        await rotate();
        continue;
      }
      await file?.write(batch);
      size += batchSize;
      stats.written += lines;
    }
  };

  const fail = (err: unknown): void => {
    failed = true;
    stats.dropped += queue.length;
    queue.length = 0;
    queuedBytes = 0;
    logger.error({ err: err instanceof Error ? err.message : String(err), path }, 'record: writing the recording failed; the controller goes on unrecorded');
  };

  const kick = (): void => {
    if (pump !== undefined || failed) return;
    pump = drain()
      .catch(fail)
      .finally(() => {
        pump = undefined;
        if (queue.length > 0 && !failed) kick();
      });
  };
  opening.catch(() => {});

  return {
    write(line) {
      if (failed || closing) {
        stats.dropped++;
        return;
      }
      const bytes = Buffer.byteLength(line);
      if (queuedBytes + bytes > maxBuffered) {
        stats.dropped++;
        if (!warnedFull) {
          warnedFull = true;
          logger.warn({ path, maxBuffered }, 'record: the disk cannot keep up; dropping timeline entries until it does');
        }
        return;
      }
      warnedFull = false;
      queue.push(line);
      queuedBytes += bytes;
      kick();
    },
    async close() {
      closing = true;
      kick();
      while (pump !== undefined) await pump;
      await opening.catch(() => {});
      await file?.close().catch(fail);
      file = undefined;
      if (stats.dropped > 0) logger.warn({ path, dropped: stats.dropped }, 'record: some timeline entries were not recorded');
    },
    stats: () => ({ ...stats }),
  };
}
