import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { stringify } from 'yaml';
import type { ApiServer } from 'rxkube/testing';
import { eventually, start, widgetCrd } from './apiserver.helpers.js';
import { describeKubectl, kubectlPath } from './kubectl.helpers.js';

/**
 * The real kubectl (1.32, /usr/bin/kubectl) against the embedded server,
 * through a kubeconfig the server wrote: what a person would type.
 */


interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

const deployment = (replicas: number): Record<string, unknown> => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', labels: { app: 'web' } },
  spec: {
    replicas,
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'nginx', image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] } },
  },
});

const crd = (): Record<string, unknown> => {
  const doc = widgetCrd() as { spec: { versions: Record<string, unknown>[] } };
  doc.spec.versions[0].additionalPrinterColumns = [{ name: 'Size', type: 'integer', jsonPath: '.spec.size' }];
  return doc;
};

const widget = (size: number, tier = 'gold'): Record<string, unknown> => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: { name: 'w1', labels: { tier } },
  spec: { size },
});

describeKubectl('kubectl against the embedded API server', function () {
  this.timeout(60_000);
  let server: ApiServer | undefined;
  let dir = '';
  let kubeconfig: string;
  const children: ChildProcess[] = [];

  before(async () => {
    const started = await start();
    server = started;
    dir = await mkdtemp(join(tmpdir(), 'rxkube-kubectl-'));
    kubeconfig = join(dir, 'kubeconfig');
    await started.writeKubeconfig(kubeconfig);
  });
  after(async () => {
    for (const child of children) child.kill();
    await server?.close();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  function spawnKubectl(args: string[]): ChildProcess {
    const child = spawn(kubectlPath, ['--kubeconfig', kubeconfig, '--cache-dir', join(dir, 'cache'), ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: dir },
    });
    children.push(child);
    return child;
  }

  function kubectl(args: string[], stdin?: string): Promise<Run> {
    return new Promise((resolve, reject) => {
      const child = spawnKubectl(args);
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin?.end(stdin ?? '');
    });
  }

  async function ok(args: string[], stdin?: string): Promise<string> {
    const run = await kubectl(args, stdin);
    expect(run.code, `kubectl ${args.join(' ')}: ${run.stderr}`).to.equal(0);
    return run.stdout;
  }

  it('gets the namespaces as a table', async () => {
    const out = await ok(['get', 'namespaces']);
    expect(out).to.match(/^NAME\s+STATUS\s+AGE\n/);
    expect(out).to.match(/\ndefault\s+Active\s+\d+s\n/);
  });

  it('applies a Deployment, then applies a change to it, with default validation', async () => {
    expect(await ok(['apply', '-f', '-'], stringify(deployment(2)))).to.equal('deployment.apps/web created\n');
    expect(await ok(['apply', '-f', '-'], stringify(deployment(2)))).to.equal('deployment.apps/web unchanged\n');
    expect(await ok(['apply', '-f', '-'], stringify(deployment(3)))).to.equal('deployment.apps/web configured\n');
    expect(await ok(['get', 'deployment', 'web', '-o', 'jsonpath={.spec.replicas} {.metadata.generation}'])).to.equal('3 2');
    expect(await ok(['get', 'deploy'])).to.match(/^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\nweb\s+0\/3\s+0\s+0\s+\d+s\n$/);
  });

  it('applies a CRD and then a custom resource of it, printing the CRD\'s columns', async () => {
    expect(await ok(['apply', '-f', '-'], stringify(crd()))).to.equal('customresourcedefinition.apiextensions.k8s.io/widgets.example.com created\n');
    expect(await ok(['apply', '-f', '-'], stringify(widget(3)))).to.equal('widget.example.com/w1 created\n');
    expect(await ok(['apply', '-f', '-'], stringify(widget(4)))).to.equal('widget.example.com/w1 configured\n');
    expect(await ok(['get', 'widgets'])).to.match(/^NAME\s+SIZE\nw1\s+4\n$/);
    expect(await ok(['get', 'wd', 'w1', '-o', 'jsonpath={.spec.size}'])).to.equal('4');
  });

  it('patches with a merge patch and with a JSON patch', async () => {
    expect(await ok(['patch', 'widget', 'w1', '--type=merge', '-p', '{"spec":{"size":5}}'])).to.equal('widget.example.com/w1 patched\n');
    expect(await ok(['patch', 'widget', 'w1', '--type=json', '-p', '[{"op":"replace","path":"/spec/size","value":6}]'])).to.equal('widget.example.com/w1 patched\n');
    expect(await ok(['patch', 'deployment', 'web', '-p', '{"spec":{"replicas":1}}'])).to.equal('deployment.apps/web patched\n');
    expect(await ok(['get', 'widget', 'w1', '-o', 'jsonpath={.spec.size}'])).to.equal('6');
    expect(await ok(['get', 'deployment', 'web', '-o', 'jsonpath={.spec.replicas}'])).to.equal('1');
  });

  it('fails a replace from a stale resourceVersion with the conflict error', async () => {
    const stale = await ok(['get', 'widget', 'w1', '-o', 'yaml']);
    await ok(['patch', 'widget', 'w1', '--type=merge', '-p', '{"spec":{"size":7}}']);
    const run = await kubectl(['replace', '-f', '-'], stale);
    expect(run.code).to.equal(1);
    expect(run.stderr).to.contain(
      'Error from server (Conflict): error when replacing "STDIN": Operation cannot be fulfilled on widgets.example.com "w1": the object has been modified; please apply your changes to the latest version and try again',
    );
  });

  it('gets by label selector', async () => {
    await ok(['apply', '-f', '-'], stringify({ ...widget(1, 'silver'), metadata: { name: 'w2', labels: { tier: 'silver' } } }));
    expect(await ok(['get', 'widgets', '--selector', 'tier=gold', '-o', 'name'])).to.equal('widget.example.com/w1\n');
    expect(await ok(['get', 'widgets', '-l', 'tier in (gold,silver)', '-o', 'name'])).to.equal('widget.example.com/w1\nwidget.example.com/w2\n');
    const none = await kubectl(['get', 'widgets', '-l', 'tier=bronze']);
    expect(none.stderr).to.contain('No resources found in default namespace.');
  });

  it('watches with get -w, printing each change as it happens', async () => {
    const child = spawnKubectl(['get', 'widgets', '-w', '--output-watch-events']);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stdin?.end();
    await eventually(() => /\nADDED\s+w2\s+1\s/.test(out), 10_000, 'kubectl to list');
    await ok(['patch', 'widget', 'w2', '--type=merge', '-p', '{"spec":{"size":9}}']);
    await eventually(() => /\nMODIFIED\s+w2\s+9\s/.test(out), 10_000, `kubectl to print the change (got ${out})`);
    await ok(['delete', 'widget', 'w2']);
    await eventually(() => /\nDELETED\s+w2\s+9\s/.test(out), 10_000, 'kubectl to print the deletion');
    expect(out).to.match(/^EVENT\s+NAME\s+SIZE\n/);
    child.kill();
  });

  it('scales and labels', async () => {
    expect(await ok(['scale', 'deployment', 'web', '--replicas=4'])).to.equal('deployment.apps/web scaled\n');
    expect(await ok(['label', 'deployment', 'web', 'team=a'])).to.equal('deployment.apps/web labeled\n');
    expect(await ok(['get', 'deployment', 'web', '-o', 'jsonpath={.spec.replicas} {.metadata.labels.team}'])).to.equal('4 a');
  });

  it('creates the objects kubectl builds itself (sent as protobuf): namespace, configmap, secret, run, deployment, service', async () => {
    expect(await ok(['create', 'namespace', 'team'])).to.equal('namespace/team created\n');
    expect(await ok(['create', 'configmap', 'settings', '-n', 'team', '--from-literal=mode=fast'])).to.equal('configmap/settings created\n');
    expect(await ok(['create', 'secret', 'generic', 'token', '-n', 'team', '--from-literal=key=s3cret'])).to.equal('secret/token created\n');
    expect(await ok(['run', 'shell', '-n', 'team', '--image=busybox', '--env=A=B', '--port=8080', '--labels=role=shell'])).to.equal('pod/shell created\n');
    expect(await ok(['create', 'deployment', 'api', '-n', 'team', '--image=nginx:1.27', '--replicas=2'])).to.equal('deployment.apps/api created\n');
    expect(await ok(['create', 'service', 'clusterip', 'api', '-n', 'team', '--tcp=80:8080'])).to.equal('service/api created\n');
    expect(await ok(['get', 'configmap', 'settings', '-n', 'team', '-o', 'jsonpath={.data.mode}'])).to.equal('fast');
    expect(Buffer.from(await ok(['get', 'secret', 'token', '-n', 'team', '-o', 'jsonpath={.data.key}']), 'base64').toString()).to.equal('s3cret');
    expect(await ok(['get', 'pod', 'shell', '-n', 'team', '-o', 'jsonpath={.spec.containers[0].env[0].value} {.spec.containers[0].ports[0].containerPort} {.metadata.labels.role}'])).to.equal('B 8080 shell');
    expect(await ok(['get', 'deployment', 'api', '-n', 'team', '-o', 'jsonpath={.spec.replicas} {.spec.selector.matchLabels.app}'])).to.equal('2 api');
    expect(await ok(['get', 'service', 'api', '-n', 'team', '-o', 'jsonpath={.spec.ports[0].port}:{.spec.ports[0].targetPort}'])).to.equal('80:8080');
    expect(await ok(['delete', 'namespace', 'team'])).to.equal('namespace "team" deleted\n');
  });

  it('deletes, and then reports NotFound', async () => {
    expect(await ok(['delete', 'deployment', 'web'])).to.equal('deployment.apps "web" deleted\n');
    const run = await kubectl(['get', 'deployment', 'web']);
    expect(run.code).to.equal(1);
    expect(run.stderr).to.contain('Error from server (NotFound): deployments.apps "web" not found');
  });

  it('deletes a CRD together with its custom resources', async () => {
    expect(await ok(['delete', '-f', '-'], stringify(crd()))).to.equal('customresourcedefinition.apiextensions.k8s.io "widgets.example.com" deleted\n');
    const run = await kubectl(['get', 'widgets']);
    expect(run.code).to.equal(1);
    // kubectl may still hold widgets in its discovery cache, then the list itself is 404.
    expect(run.stderr).to.match(/the server doesn't have a resource type "widgets"|the server could not find the requested resource/);
  });
});
