import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { runCli } from '../../src/cli.js';
import { controller, type ControllerOptions, type KubeObject } from '../../src/index.js';
import { rxkubeProcess, type RxkubeExit } from '../support/rxkubeProcess.js';

const widgets = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget' };

/** Wirings that controller() refuses, each with the entry its message names. */
const refused: [string, Record<string, unknown>, string][] = [
  ['a grant of everything', { permissions: [{ group: '*', resource: '*', verbs: ['*'] }] }, 'permissions[0].resource must be a plural resource name'],
  ['a wildcard verb', { permissions: [{ resource: 'pods', verbs: ['*'] }] }, 'permissions[0].verbs: "*" is not one of'],
  ['an unknown verb', { permissions: [{ resource: 'pods', verbs: ['get', 'frobnicate'] }] }, 'permissions[0].verbs: "frobnicate" is not one of'],
  ['escalate without the acknowledgement', { permissions: [{ group: 'rbac.authorization.k8s.io', resource: 'clusterroles', verbs: ['escalate'] }] }, 'permissions[0].verbs: "escalate" lets the controller act beyond its own permissions'],
  ['bind without the acknowledgement', { permissions: [{ resource: 'pods', verbs: ['get'] }, { group: 'rbac.authorization.k8s.io', resource: 'roles', verbs: ['bind'] }] }, 'permissions[1].verbs: "bind" lets the controller act beyond'],
  ['impersonate without the acknowledgement', { permissions: [{ resource: 'users', verbs: ['impersonate'], allowPrivilegeEscalation: false }] }, 'permissions[0].verbs: "impersonate" lets the controller act beyond'],
  ['an informer of every resource', { for: { group: '*', version: 'v1', resource: '*', kind: 'Widget' } }, 'for.resource must be a plural resource name such as "deployments" (no wildcard), got "*"'],
  ['an owned informer of every group', { owns: [{ group: '*', version: 'v1', resource: 'secrets', kind: 'Secret' }] }, 'owns[0].group must be an API group name (no wildcard), got "*"'],
];

function definitionModule(wiring: Record<string, unknown>): string {
  const options = { name: 'w', for: widgets, ...wiring };
  return `export function definition(kubeConfig) { return { kubeConfig, reconcile() {}, ...${JSON.stringify(options)} }; }\n`;
}

/** The CLI in this process (quicker than a process of its own, which the first case of each test is). */
async function inProcess(args: string[], cwd?: string): Promise<RxkubeExit> {
  const out: string[] = [];
  const err: string[] = [];
  const here = process.cwd();
  if (cwd !== undefined) process.chdir(cwd);
  try {
    const code = await runCli(args, { out: (l) => out.push(l), err: (l) => err.push(l), untilStopped: () => Promise.resolve() });
    return { code, out: out.join('\n'), err: err.join('\n') };
  } finally {
    process.chdir(here);
  }
}

/** `rxkube manifests` and `rxkube run` refuse, with exit 2, what controller() refuses, and what is no module. */
describe('rxkube manifests and run: the checks controller() runs, and what is no module', function () {
  this.timeout(60_000);
  let dir: string;
  before(async () => (dir = await mkdtemp(join(tmpdir(), 'rxkube-access-'))));
  after(() => rm(dir, { recursive: true, force: true }));

  it('rxkube manifests refuses exactly what controller() refuses, naming the entry, with exit 2', async () => {
    const kubeConfig = new KubeConfig();
    const runs: RxkubeExit[] = [];
    for (const [i, [, wiring]] of refused.entries()) {
      const file = join(dir, `refused-${i}.mjs`);
      await writeFile(file, definitionModule(wiring));
      runs.push(i === 0 ? await rxkubeProcess(['manifests', file]) : await inProcess(['manifests', file]));
    }
    refused.forEach(([what, wiring, entry], i) => {
      const options = { name: 'w', kubeConfig, for: widgets, reconcile: () => undefined, ...wiring } as unknown as ControllerOptions<KubeObject>;
      let thrown = '';
      try {
        controller(options);
      } catch (err) {
        thrown = (err as Error).message;
      }
      expect(thrown, what).to.contain(`controller "w": ${entry}`);
      const run = runs[i];
      expect(run?.code, `${what}: ${run?.err}`).to.equal(2);
      expect(run?.out, what).to.equal('');
      expect(run?.err.split('\n')[0], what).to.equal(`rxkube manifests: the definition of "w": ${thrown}`);
    });
  });

  it('rxkube manifests prints escalate, bind and impersonate when a grant acknowledges them (allowPrivilegeEscalation)', async () => {
    const file = join(dir, 'acknowledged.mjs');
    const permissions = [{ group: 'rbac.authorization.k8s.io', resource: 'clusterroles', verbs: ['bind', 'escalate', 'get'], namespace: '*', allowPrivilegeEscalation: true }];
    await writeFile(file, definitionModule({ permissions }));
    const { code, out, err } = await inProcess(['manifests', file]);
    expect(code, err).to.equal(0);
    const clusterRole = parseAllDocuments(out)
      .map((d) => d.toJS() as { kind: string; rules?: { resources: string[]; verbs: string[] }[] })
      .find((o) => o.kind === 'ClusterRole');
    expect(clusterRole?.rules?.find((r) => r.resources[0] === 'clusterroles')?.verbs).to.deep.equal(['get', 'escalate', 'bind']);
  });

  it('rxkube run and rxkube manifests exit 2 for a directory, a text file and a file that does not parse, naming it', async () => {
    await mkdir(join(dir, 'folder'));
    await writeFile(join(dir, 'notes.txt'), 'hello world\n');
    await writeFile(join(dir, 'notes.mjs'), 'hello world\n');
    const cases: [string, string][] = [
      ['folder', 'rxkube COMMAND: folder is a directory, not a module'],
      ['notes.txt', 'rxkube COMMAND: notes.txt is not a module: its name must end in .js, .mjs, .cjs, .ts, .mts, .cts'],
      ['notes.mjs', "rxkube COMMAND: notes.mjs is not a module that parses: Unexpected identifier 'world'"],
    ];
    const runs: RxkubeExit[] = [];
    for (const [file] of cases) {
      for (const command of ['run', 'manifests']) runs.push(runs.length === 0 ? await rxkubeProcess([command, file], { cwd: dir }) : await inProcess([command, file], dir));
    }
    cases.forEach(([file, message], i) => {
      for (const [j, command] of ['run', 'manifests'].entries()) {
        const run = runs[i * 2 + j];
        expect(run?.code, `${command} ${file}: ${run?.err}`).to.equal(2);
        expect(run?.err.split('\n')[0]).to.equal(message.replace('COMMAND', command));
      }
    });
  });
});
