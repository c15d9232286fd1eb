import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { runCli } from '../../src/cli.js';

/** `rxkube manifests` and `rxkube run` in process: their usage errors (exit 2, naming what is wrong) and a definition without webhooks. */
describe('rxkube manifests and rxkube run: command lines and definitions', function () {
  this.timeout(60_000);
  let dir: string;
  let out: string[];
  let err: string[];
  const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), untilStopped: () => Promise.resolve() };
  const cli = (args: string[]) => runCli(args, io);

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rxkube-commands-'));
  });
  beforeEach(() => {
    out = [];
    err = [];
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('lists both commands in its usage', async () => {
    expect(await cli([])).to.equal(2);
    expect(out.join('\n')).to.contain('manifests <module>').and.to.contain('run <module>');
  });

  it('prints a controller without webhooks: no Secret, no webhook configuration, a Role in the namespace asked for', async () => {
    expect(await cli(['manifests', 'examples/configmap-rollout/controller.ts', '--namespace', 'apps', '--replicas', '2', '--memory', '64Mi']), err.join('\n')).to.equal(0);
    const objects = parseAllDocuments(out.join('\n')).map((d) => d.toJS() as { kind: string; metadata: { namespace?: string }; spec?: { replicas?: number; template?: { spec: { containers: { image: string; resources: unknown }[] } } } });
    expect(objects.map((o) => o.kind)).to.deep.equal(['ServiceAccount', 'Role', 'RoleBinding', 'Service', 'Deployment']);
    expect(objects.every((o) => o.metadata.namespace === 'apps')).to.equal(true);
    const deployment = objects.find((o) => o.kind === 'Deployment');
    expect(deployment?.spec?.replicas).to.equal(2);
    expect(deployment?.spec?.template?.spec.containers[0]).to.deep.include({ image: 'configmap-rollout:latest', resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '64Mi' } } });
  });

  it('exits 2 naming the problem: no module, two modules, a bad value, a CA file that holds no certificate', async () => {
    expect(await cli(['manifests'])).to.equal(2);
    expect(await cli(['manifests', 'a.ts', 'b.ts'])).to.equal(2);
    expect(await cli(['manifests', 'examples/configmap-rollout/controller.ts', '--replicas', 'two'])).to.equal(2);
    const notPem = join(dir, 'ca.txt');
    await writeFile(notPem, 'hello');
    expect(await cli(['manifests', 'examples/podautoscaler/controller.ts', '--ca-bundle-file', notPem])).to.equal(2);
    expect(await cli(['manifests', join(dir, 'missing.ts')])).to.equal(2);
    expect(err).to.deep.equal([
      'rxkube manifests: needs exactly one module, got none\n(rxkube manifests --help lists the options)',
      'rxkube manifests: needs exactly one module, got "a.ts" "b.ts"\n(rxkube manifests --help lists the options)',
      'rxkube manifests: --replicas must be a non-negative integer, got "two"\n(rxkube manifests --help lists the options)',
      `rxkube manifests: --ca-bundle-file: ${notPem} holds no PEM certificate\n(rxkube manifests --help lists the options)`,
      `rxkube manifests: no module at ${join(dir, 'missing.ts')}\n(rxkube manifests --help lists the options)`,
    ]);
  });

  it('exits 2 for a definition of the wrong shape, and 1 for a module that throws as it loads', async () => {
    const nameless = join(dir, 'nameless.mjs');
    await writeFile(nameless, 'export function definition(kubeConfig) { return { kubeConfig, for: {}, reconcile() {} }; }\n');
    expect(await cli(['manifests', nameless])).to.equal(2);
    expect(err.at(-1)).to.contain('the definition returned no name');
    const broken = join(dir, 'broken.mjs');
    await writeFile(broken, 'throw new Error("boom at load");\n');
    expect(await cli(['manifests', broken])).to.equal(1);
    expect(err.at(-1)).to.equal('rxkube manifests: boom at load');
  });

  it('rxkube run: exits 2 without a module, for a bad port and for a module without a definition', async () => {
    expect(await cli(['run'])).to.equal(2);
    expect(err.at(-1)).to.contain('rxkube run: needs exactly one module');
    expect(await cli(['run', 'x.js', '--health-port', 'eighty'])).to.equal(2);
    expect(err.at(-1)).to.contain('rxkube run: --health-port must be a port number, got "eighty"');
    const empty = join(dir, 'empty.mjs');
    await writeFile(empty, 'export const nothing = 1;\n');
    expect(await cli(['run', empty])).to.equal(2);
    expect(err.at(-1)).to.contain('exports no definition function');
  });
});
