import { constants } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';

/**
 * Files that hold objects or credentials (recordings, kubeconfigs) are
 * readable by their owner only. `open(path, 'w', 0o600)` is not enough:
 * the mode applies only when the file is created, so writing over an
 * existing 0644 file would leave it world-readable; and a path another
 * local user could create first (a symbolic link to a file of ours, a file
 * of theirs) would hand them what is written.
 */

/**
 * Opens `path` for writing from its start, as a regular file of this
 * user's with mode 0600 (created so, or set so if it existed). Refuses,
 * with an error naming the path, a symbolic link (not followed), something
 * that is not a regular file, and a file another user owns (before
 * truncating it).
 */
export async function openPrivateFile(path: string): Promise<FileHandle> {
  let file: FileHandle;
  try {
    file = await open(path, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new Error(`${path} is a symbolic link; not following it to write what only its owner may read`, { cause: err });
    throw err;
  }
  try {
    const stats = await file.stat();
    if (!stats.isFile()) throw new Error(`${path} is not a regular file`);
    const uid = process.getuid?.();
    if (uid !== undefined && stats.uid !== uid) throw new Error(`${path} belongs to another user (uid ${stats.uid}); not writing over it`);
    await file.chmod(0o600);
    await file.truncate(0);
    return file;
  } catch (err) {
    await file.close();
    throw err;
  }
}

/** Writes `data` to `path` as `openPrivateFile` opens it: 0600, this user's, no symbolic link followed. */
export async function writePrivateFile(path: string, data: string): Promise<void> {
  const file = await openPrivateFile(path);
  try {
    await file.writeFile(data);
  } finally {
    await file.close();
  }
}
