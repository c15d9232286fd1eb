import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'chai';

/** The real kubectl (1.32, /usr/bin/kubectl), run as a person would against a server's kubeconfig. */

export const kubectlPath = '/usr/bin/kubectl';

export interface KubectlRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface Kubectl {
  /** Runs kubectl with these arguments (and stdin), whatever its exit code. */
  run(args: string[], stdin?: string): Promise<KubectlRun>;
  /** Runs kubectl and expects it to succeed; its stdout. */
  ok(args: string[], stdin?: string): Promise<string>;
  /** Kills what is still running (for an after hook). */
  stop(): void;
}

/** kubectl with this kubeconfig, a cache and a HOME in `dir`. */
export function kubectlIn(dir: string, kubeconfig: string): Kubectl {
  const children = new Set<ChildProcess>();
  function run(args: string[], stdin?: string): Promise<KubectlRun> {
    return new Promise((resolve, reject) => {
      const child = spawn(kubectlPath, ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args], {
        env: { PATH: process.env.PATH ?? '', HOME: dir },
      });
      children.add(child);
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => {
        children.delete(child);
        resolve({ code, stdout, stderr });
      });
      child.stdin.end(stdin ?? '');
    });
  }
  return {
    run,
    async ok(args, stdin) {
      const result = await run(args, stdin);
      expect(result.code, `kubectl ${args.join(' ')}: ${result.stderr}`).to.equal(0);
      return result.stdout;
    },
    stop() {
      for (const child of children) child.kill();
    },
  };
}
