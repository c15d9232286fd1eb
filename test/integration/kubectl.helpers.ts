import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import type { ApiServer, ApiServerOptions } from 'rxkube/testing';
import { start } from './apiserver.helpers.js';

/** The real kubectl (1.32, /usr/bin/kubectl), run as a person would against a server's kubeconfig. */

export const kubectlPath = '/usr/bin/kubectl';

/**
 * kubectl missing is a failure, not a silent skip: these suites are part of
 * the contract. RXKUBE_SKIP_KUBECTL=1 skips them on purpose, and the totals
 * line then says how many were skipped.
 */
const skipOnPurpose = process.env.RXKUBE_SKIP_KUBECTL === '1';
const missing =
  `kubectl not found at ${kubectlPath}: this suite runs the real kubectl 1.32 against the embedded API server. ` +
  'Install it (curl -LO https://dl.k8s.io/release/v1.32.4/bin/linux/amd64/kubectl && sudo install kubectl /usr/bin/kubectl; ' +
  "not Debian's kubernetes-client package), or set RXKUBE_SKIP_KUBECTL=1 to skip the suite on purpose.";

function requireKubectl(): void {
  if (!existsSync(kubectlPath)) throw new Error(missing);
}

/** A suite that runs kubectl: it fails first thing, saying how to install it, when kubectl is missing. */
export function describeKubectl(title: string, body: (this: Mocha.Suite) => void): void {
  (skipOnPurpose ? describe.skip : describe)(title, function () {
    before(requireKubectl);
    body.call(this);
  });
}

/** A test that runs kubectl, in a suite that otherwise does not: the same rule, for one test. */
export function itKubectl(title: string, body: () => Promise<void>): void {
  (skipOnPurpose ? it.skip : it)(title, async () => {
    requireKubectl();
    await body();
  });
}

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

/** What {@link kubectlAgainstServer} gives a suite's tests, set once its `before` hook ran. */
export interface KubectlSuite {
  readonly server: ApiServer;
  readonly k: Kubectl;
}

/**
 * For the body of a suite: an embedded server and kubectl with a kubeconfig for it, in a new
 * temporary directory (`<prefix>XXXXXX`), started before the suite's tests and stopped after them
 * (kubectl runs, the server, the directory), whether they pass or not.
 */
export function kubectlAgainstServer(prefix: string, options: ApiServerOptions = {}): KubectlSuite {
  const suite = {} as { server: ApiServer; k: Kubectl; dir?: string };
  before(async () => {
    suite.server = await start(options);
    suite.dir = await mkdtemp(join(tmpdir(), prefix));
    const kubeconfig = join(suite.dir, 'kubeconfig');
    await suite.server.writeKubeconfig(kubeconfig);
    suite.k = kubectlIn(suite.dir, kubeconfig);
  });
  after(async () => {
    suite.k?.stop();
    await suite.server?.close();
    if (suite.dir !== undefined) await rm(suite.dir, { recursive: true, force: true });
  });
  return suite;
}
