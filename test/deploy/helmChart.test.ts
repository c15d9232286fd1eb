import { expect } from 'chai';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { selfSignedCertificates } from 'rxkube/webhooks';
import { runCli } from '../../src/cli.js';
import { runCommand, withEnvironment } from '../../src/deploy/runCommand.js';
import { helmTemplate } from '../support/helmTemplate.js';

type Obj = Record<string, unknown> & { kind: string; metadata: { name: string; namespace?: string } };

/** Objects in one order, whatever order they came in: Helm sorts its output by kind, `rxkube manifests` in apply order. */
function sorted(objects: readonly Record<string, unknown>[]): Obj[] {
  const id = (o: Obj) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
  return ([...objects] as Obj[]).sort((a, b) => id(a).localeCompare(id(b)));
}

/** Every path at which two JSON values differ, prefixed with the object it is in. */
function differences(a: unknown, b: unknown, at = ''): string[] {
  if (JSON.stringify(a) === JSON.stringify(b)) return [];
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object' || Array.isArray(a) !== Array.isArray(b)) return [at];
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].flatMap((k) => differences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], at === '' ? k : `${at}.${k}`));
}

function objectDifferences(before: Obj[], after: Obj[]): string[] {
  expect(after.map((o) => `${o.kind}/${o.metadata.name}`)).to.deep.equal(before.map((o) => `${o.kind}/${o.metadata.name}`));
  return before.flatMap((o, i) => differences(o, after[i]).map((path) => `${o.kind} ${path}`));
}

/** `rxkube manifests --helm`, rendered as `helm template --include-crds` would, against the plain manifests: the same objects. */
describe('rxkube manifests --helm: a chart that renders to the plain manifests', function () {
  this.timeout(120_000);
  let dir: string;
  let caFile: string;
  let out: string[];
  let err: string[];
  const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), untilStopped: () => Promise.resolve() };
  const cli = async (args: string[]): Promise<number> => {
    out = [];
    err = [];
    return runCli(args, io);
  };
  const plain = async (args: string[]): Promise<Obj[]> => {
    expect(await cli(['manifests', ...args]), err.join('\n')).to.equal(0);
    return sorted(parseAllDocuments(out.join('\n')).map((d) => d.toJS() as Obj));
  };
  let charts = 0;
  const chart = async (args: string[]): Promise<string> => {
    const folder = join(dir, `chart-${++charts}`);
    expect(await cli(['manifests', ...args, '--helm', folder]), err.join('\n')).to.equal(0);
    return folder;
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rxkube-helm-'));
    caFile = join(dir, 'ca.pem');
    const made = await selfSignedCertificates({ dnsNames: ['x.example'], ipAddresses: [] });
    await writeFile(caFile, Buffer.from(made.caBundle, 'base64'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('renders a controller without webhooks to exactly the plain manifests, in the release\'s namespace, and lists the files written', async () => {
    const options = ['--image', 'registry.example/rollout:3', '--replicas', '2', '--memory', '64Mi'];
    const folder = await chart(['examples/configmap-rollout/controller.ts', ...options]);
    expect(out.map((p) => p.slice(folder.length + 1))).to.deep.equal([
      'Chart.yaml',
      'values.yaml',
      'templates/01-serviceaccount-configmap-rollout.yaml',
      'templates/02-role-configmap-rollout.yaml',
      'templates/03-rolebinding-configmap-rollout.yaml',
      'templates/04-service-configmap-rollout.yaml',
      'templates/05-deployment-configmap-rollout.yaml',
    ]);
    for (const namespace of ['default', 'apps']) {
      expect(sorted(await helmTemplate(folder, namespace))).to.deep.equal(await plain(['examples/configmap-rollout/controller.ts', ...options, '--namespace', namespace]));
    }
    // No private key in it: readable as any chart.
    expect((await stat(join(folder, 'values.yaml'))).mode & 0o777).to.equal(0o644);
  });

  it('puts a CRD in crds/, untemplated, and renders the rest as the plain manifests', async () => {
    const folder = await chart(['examples/gitsync/controller.ts']);
    const crds = await readdir(join(folder, 'crds'));
    expect(crds).to.have.length(1);
    expect(sorted(await helmTemplate(folder, 'default'))).to.deep.equal(await plain(['examples/gitsync/controller.ts']));
  });

  it('renders webhooks, their CA, and a CRD that converts through them (a template: it names the namespace) exactly, with a CA given', async () => {
    const folder = await chart(['examples/podautoscaler/controller.ts', '--ca-bundle-file', caFile]);
    expect(await readdir(join(folder, 'crds')).catch(() => [])).to.deep.equal([]);
    for (const namespace of ['default', 'autoscalers']) {
      expect(sorted(await helmTemplate(folder, namespace))).to.deep.equal(await plain(['examples/podautoscaler/controller.ts', '--ca-bundle-file', caFile, '--namespace', namespace]));
    }
  });

  it('with certificates made here: the Secret from values (0600, since they hold its key), absent when webhook.cert is empty', async () => {
    const folder = await chart(['examples/podautoscaler/controller.ts']);
    expect((await stat(join(folder, 'values.yaml'))).mode & 0o777).to.equal(0o600);
    const rendered = sorted(await helmTemplate(folder, 'default'));
    const printed = await plain(['examples/podautoscaler/controller.ts']);
    // Each run makes its own certificates: the two differ in those, and only in those.
    expect(objectDifferences(printed, rendered).sort()).to.deep.equal([
      'CustomResourceDefinition spec.conversion.webhook.clientConfig.caBundle',
      'MutatingWebhookConfiguration webhooks.0.clientConfig.caBundle',
      'Secret stringData.tls.crt',
      'Secret stringData.tls.key',
      'ValidatingWebhookConfiguration webhooks.0.clientConfig.caBundle',
    ]);
    const secret = rendered.find((o) => o.kind === 'Secret') as Obj & { stringData: Record<string, string> };
    expect(secret.stringData['tls.key']).to.match(/^-----BEGIN RSA PRIVATE KEY-----\n[\s\S]+\n-----END RSA PRIVATE KEY-----\n?$/);
    const withoutCert = await helmTemplate(folder, 'default', { webhook: { cert: '', key: '' } });
    expect(withoutCert.map((o) => o.kind)).not.to.include('Secret');
    expect(withoutCert).to.have.length(rendered.length - 1);
  });

  it('changes exactly the fields a changed value names, and nothing else', async () => {
    const folder = await chart(['examples/podautoscaler/controller.ts', '--ca-bundle-file', caFile]);
    const base = sorted(await helmTemplate(folder, 'default'));
    const change = async (overrides: Record<string, unknown>) => objectDifferences(base, sorted(await helmTemplate(folder, 'default', overrides))).sort();
    expect(await change({ image: 'registry.example/pa:2' })).to.deep.equal(['Deployment spec.template.spec.containers.0.image']);
    expect(await change({ replicas: 3 })).to.deep.equal(['Deployment spec.replicas']);
    expect(await change({ resources: { requests: { cpu: '1' }, limits: { cpu: '2' } } })).to.deep.equal([
      'Deployment spec.template.spec.containers.0.resources.limits.cpu',
      'Deployment spec.template.spec.containers.0.resources.requests.cpu',
    ]);
    expect(await change({ metrics: { scrape: false } })).to.deep.equal(['Service metadata.annotations']);
    expect(await change({ webhook: { caBundle: 'Zm9v' } })).to.deep.equal([
      'CustomResourceDefinition spec.conversion.webhook.clientConfig.caBundle',
      'MutatingWebhookConfiguration webhooks.0.clientConfig.caBundle',
      'ValidatingWebhookConfiguration webhooks.0.clientConfig.caBundle',
    ]);
    const changed = sorted(await helmTemplate(folder, 'default', { image: 'registry.example/pa:2', replicas: 3, metrics: { scrape: false } }));
    const deployment = changed.find((o) => o.kind === 'Deployment') as Obj & { spec: { replicas: unknown; template: { spec: { containers: { image: unknown }[] } } } };
    expect(deployment.spec.replicas).to.equal(3);
    expect(deployment.spec.template.spec.containers[0]?.image).to.equal('registry.example/pa:2');
    expect(changed.find((o) => o.kind === 'Service')?.metadata).not.to.have.property('annotations');
  });

  it('turns the definition\'s leader election off through leaderElection.enabled, which rxkube run honours', async () => {
    const folder = await chart(['examples/leader-elected/replica.ts']);
    const base = sorted(await helmTemplate(folder, 'default'));
    expect(base).to.deep.equal(await plain(['examples/leader-elected/replica.ts']));
    const off = sorted(await helmTemplate(folder, 'default', { leaderElection: { enabled: false } }));
    expect(objectDifferences(base, off)).to.deep.equal(['Deployment spec.template.spec.containers.0.env.2']);
    const env = (off.find((o) => o.kind === 'Deployment') as Obj & { spec: { template: { spec: { containers: { env: unknown[] }[] } } } }).spec.template.spec.containers[0]?.env;
    expect(env?.[2]).to.deep.equal({ name: 'RXKUBE_LEADER_ELECTION', value: 'false' });
    const options = { name: 'x', leaderElection: { lease: 'default/x' } };
    expect(withEnvironment(options, { RXKUBE_LEADER_ELECTION: 'false' })).to.deep.equal({ name: 'x' });
    expect(withEnvironment(options, { RXKUBE_LEADER_ELECTION: 'true' })).to.deep.equal(options);
    expect(withEnvironment(options, {})).to.deep.equal(options);
    out = [];
    err = [];
    expect(await runCommand(['examples/leader-elected/replica.ts'], io, { RXKUBE_LEADER_ELECTION: 'no' })).to.equal(2);
    expect(err.at(-1)).to.equal('rxkube run: RXKUBE_LEADER_ELECTION must be "true" or "false", got "no"');
  });

  it('exits 2 naming the problem: a folder that is not empty, a file, no folder, a misspelt option', async () => {
    const full = join(dir, 'full');
    await cli(['manifests', 'examples/configmap-rollout/controller.ts', '--helm', full]);
    expect(await cli(['manifests', 'examples/configmap-rollout/controller.ts', '--helm', full])).to.equal(2);
    expect(err.join('\n')).to.equal(`rxkube manifests: --helm: ${full} is not empty (it holds Chart.yaml, templates, values.yaml); name a new or empty folder\n(rxkube manifests --help lists the options)`);
    expect(await cli(['manifests', 'examples/configmap-rollout/controller.ts', '--helm', caFile])).to.equal(2);
    expect(err.join('\n')).to.contain(`--helm: ${caFile} is a file, not a folder`);
    expect(await cli(['manifests', 'examples/configmap-rollout/controller.ts', '--helm'])).to.equal(2);
    expect(err.join('\n')).to.contain("Option '--helm <value>' argument missing");
    expect(await cli(['manifests', 'examples/configmap-rollout/controller.ts', '--hlem', full])).to.equal(2);
    expect(err.join('\n')).to.contain('unknown option --hlem (did you mean --helm?)');
    expect(await cli(['manifests', '--help'])).to.equal(0);
    expect(out.join('\n')).to.contain('--helm <dir>');
  });
});
