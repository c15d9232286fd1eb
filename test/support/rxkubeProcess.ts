import { spawn } from 'node:child_process';
import { join } from 'node:path';

const root = new URL('../..', import.meta.url).pathname;
const bin = join(root, 'bin/rxkube.js');

/** What one `rxkube` process said and how it exited. */
export interface RxkubeExit {
  code: number | null;
  out: string;
  err: string;
}

/**
 * `rxkube <args>` as a user runs it, in a process of its own, run to its
 * end: for commands that stop by themselves. The process is killed if the
 * test's `signal` aborts first.
 */
export function rxkubeProcess(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; signal?: AbortSignal } = {}): Promise<RxkubeExit> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [bin, ...args], { cwd: options.cwd ?? root, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'], ...(options.signal ? { signal: options.signal } : {}) });
    let out = '';
    let err = '';
    proc.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    proc.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    proc.on('error', reject);
    proc.on('close', (code) => resolve({ code, out, err }));
  });
}
