import { execFile } from 'node:child_process';
import { cp, mkdir, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

/** What the package tests share: the repository's root, a shell, a clean clone. */

export const exec = promisify(execFile);
export const root = new URL('../..', import.meta.url).pathname;

/** Runs `command` in `cwd` as a user's shell would, failing with its output. */
export async function sh(command: string, cwd: string, env: NodeJS.ProcessEnv, timeout = 240_000): Promise<string> {
  try {
    const { stdout, stderr } = await exec('sh', ['-c', command], { cwd, env, timeout, maxBuffer: 32 * 1024 * 1024 });
    return stdout + stderr;
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    throw new Error(`\`${command}\` failed in ${cwd}:\n${stdout ?? ''}${stderr ?? ''}\n${String(err)}`);
  }
}

/** The tracked and unignored files of the working tree, as a clean clone has them. */
export async function trackedFiles(): Promise<string[]> {
  const { stdout } = await exec('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, maxBuffer: 32 * 1024 * 1024 });
  return stdout.split('\0').filter(Boolean);
}

/** Copies `files` of the working tree into `into`. */
export async function copyFiles(files: readonly string[], into: string): Promise<void> {
  for (const file of files) {
    await mkdir(dirname(join(into, file)), { recursive: true });
    await cp(join(root, file), join(into, file)).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err; // a file deleted but not yet committed
    });
  }
}

/** A copy of the working tree as a clean clone has it: tracked and unignored files, no dist/, and this repository's node_modules. */
export async function cleanClone(into: string): Promise<void> {
  await copyFiles(await trackedFiles(), into);
  await symlink(join(root, 'node_modules'), join(into, 'node_modules'));
}

/** The environment of a user's shell: no npm script variables, no KUBECONFIG of the caller. */
export function userEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_(package|lifecycle)_/.test(name) && name !== 'KUBECONFIG'));
}
