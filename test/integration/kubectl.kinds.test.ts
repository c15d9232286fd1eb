import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { stringify } from 'yaml';
import type { ApiServer } from 'rxkube/testing';
import { start } from './apiserver.helpers.js';
import { describeKubectl, kubectlIn, type Kubectl } from './kubectl.helpers.js';

/**
 * kubectl 1.32 against the embedded server on what issue 13 adds: the built-in kinds it
 * creates itself, `kubectl explain` from the served OpenAPI, field validation of a typo,
 * kube's columns, and the answers of logs and exec on a server that runs no containers.
 */

const typoDeployment = (name: string): Record<string, unknown> => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'nginx', image: 'nginx', imagePullPolicyy: 'Always' }] } },
  },
});

const gadgetCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gadgets.example.com' },
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            description: 'A Gadget is a thing.',
            properties: { spec: { type: 'object', properties: { size: { type: 'integer', description: 'How big the gadget is, in gadget units.' } } } },
          },
        },
      },
    ],
  },
};

describeKubectl('kubectl on the kinds, schemas and answers of issue 13', function () {
  this.timeout(60_000);
  let server: ApiServer;
  let dir: string;
  let k: Kubectl;

  before(async () => {
    server = await start();
    dir = await mkdtemp(join(tmpdir(), 'rxkube-kubectl-kinds-'));
    const kubeconfig = join(dir, 'kubeconfig');
    await server.writeKubeconfig(kubeconfig);
    k = kubectlIn(dir, kubeconfig);
  });
  after(async () => {
    k.stop();
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('explains a built-in field from Kubernetes\'s schemas', async () => {
    const out = await k.ok(['explain', 'deployment.spec.replicas']);
    expect(out).to.match(/GROUP:\s+apps\nKIND:\s+Deployment\nVERSION:\s+v1\n/);
    expect(out).to.contain('FIELD: replicas <integer>');
    expect(out).to.contain('Number of desired pods.');
    expect(await k.ok(['explain', 'jobs.spec'])).to.match(/template\s+<PodTemplateSpec> -required-/);
  });

  it('explains a field of a CRD from its schema', async () => {
    await k.ok(['apply', '-f', '-'], stringify(gadgetCrd));
    const out = await k.ok(['explain', 'gadget.spec.size']);
    expect(out).to.match(/GROUP:\s+example\.com\nKIND:\s+Gadget\nVERSION:\s+v1\n/);
    expect(out).to.contain('FIELD: size <integer>');
    expect(out).to.contain('How big the gadget is, in gadget units.');
  });

  it('explains from the OpenAPI v2 document too (--output=plaintext-openapiv2 reads /openapi/v2 in protobuf)', async () => {
    const builtin = await k.ok(['explain', 'deployment.spec.replicas', '--output=plaintext-openapiv2']);
    expect(builtin).to.match(/KIND:\s+Deployment\nVERSION:\s+apps\/v1\n\nFIELD:\s+replicas <integer>/);
    expect(builtin).to.contain('Number of desired pods.');
    // A field of a named type is that type (kube's v2 refers to it), with the type's description.
    expect(await k.ok(['explain', 'deployment.metadata', '--output=plaintext-openapiv2'])).to.match(/RESOURCE:\s+metadata <Object>[\s\S]*ObjectMeta is metadata/);
    await k.ok(['apply', '-f', '-'], stringify(gadgetCrd));
    const custom = await k.ok(['explain', 'gadget.spec.size', '--output=plaintext-openapiv2']);
    expect(custom).to.match(/KIND:\s+Gadget\nVERSION:\s+example\.com\/v1\n\nFIELD:\s+size <integer>/);
    expect(custom).to.contain('How big the gadget is, in gadget units.');
  });

  it('rejects a custom resource with a field its CRD does not declare, under kubectl\'s default validation', async () => {
    const gadget = (spec: Record<string, unknown>): string => stringify({ apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name: 'g1' }, spec });
    const run = await k.run(['apply', '-f', '-'], gadget({ sizee: 3 }));
    expect(run.code).to.equal(1);
    expect(run.stderr).to.contain('Error from server (BadRequest): error when creating "STDIN": Gadget in version "v1" cannot be handled as a Gadget: strict decoding error: unknown field "spec.sizee"');
    expect(await k.ok(['apply', '-f', '-'], gadget({ size: 3 }))).to.equal('gadget.example.com/g1 created\n');
  });

  it('rejects a Deployment with an unknown field under kubectl\'s default (Strict), as kube words it', async () => {
    for (const verb of ['apply', 'create']) {
      const run = await k.run([verb, '-f', '-'], stringify(typoDeployment('typo')));
      expect(run.code, verb).to.equal(1);
      expect(run.stderr).to.contain(
        'Error from server (BadRequest): error when creating "STDIN": Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.template.spec.containers[0].imagePullPolicyy"',
      );
    }
    expect((await k.run(['get', 'deployment', 'typo'])).stderr).to.contain('not found');
  });

  it('warns of it under Warn and stores the Deployment without it', async () => {
    const run = await k.run(['apply', '--validate=warn', '-f', '-'], stringify(typoDeployment('warned')));
    expect(run.code, run.stderr).to.equal(0);
    expect(run.stderr).to.contain('Warning: unknown field "spec.template.spec.containers[0].imagePullPolicyy"');
    expect(await k.ok(['get', 'deployment', 'warned', '-o', 'jsonpath={.spec.template.spec.containers[0]}'])).to.equal(
      '{"image":"nginx","imagePullPolicy":"Always","name":"nginx","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}',
    );
  });

  it('rejects a typo in an apply to an existing Deployment (a strategic merge patch), as kube words it', async () => {
    const manifest = typoDeployment('warned') as { spec: { template: { spec: { containers: Record<string, unknown>[] } } } };
    manifest.spec.template.spec.containers[0] = { name: 'nginx', image: 'nginx', imagePullPolicyz: 'Never' };
    const run = await k.run(['apply', '-f', '-'], stringify(manifest));
    expect(run.code).to.equal(1);
    expect(run.stderr).to.contain('The request is invalid: patch: Invalid value: "map[');
    expect(run.stderr).to.contain('strict decoding error: unknown field "spec.template.spec.containers[0].imagePullPolicyz"');
  });

  it('creates a job and a deployment with kubectl create, and lists them with kube\'s columns', async () => {
    expect(await k.ok(['create', 'job', 'once', '--image=busybox'])).to.equal('job.batch/once created\n');
    expect(await k.ok(['create', 'deployment', 'api', '--image=nginx:1.27', '--replicas=2'])).to.equal('deployment.apps/api created\n');
    expect(await k.ok(['get', 'jobs'])).to.match(/^NAME\s+STATUS\s+COMPLETIONS\s+DURATION\s+AGE\nonce\s+Running\s+0\/1\s+\d+s\n$/);
    expect(await k.ok(['get', 'deployment', 'api', '-o', 'wide'])).to.match(
      /^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR\napi\s+0\/2\s+0\s+0\s+\d+s\s+nginx\s+nginx:1\.27\s+app=api\n$/,
    );
    expect(await k.ok(['get', 'job', 'once', '-o', 'jsonpath={.spec.template.spec.containers[0].image} {.metadata.generation}'])).to.equal('busybox 1');
  });

  it('creates the other kinds kubectl builds itself: cronjob, serviceaccount, quota, role, binding, pdb, ingress', async () => {
    const creates: [string[], string][] = [
      [['create', 'cronjob', 'nightly', '--image=busybox', '--schedule=0 3 * * *'], 'cronjob.batch/nightly created'],
      [['create', 'serviceaccount', 'robot'], 'serviceaccount/robot created'],
      [['create', 'quota', 'small', '--hard=pods=3'], 'resourcequota/small created'],
      [['create', 'role', 'reader', '--verb=get,list', '--resource=pods'], 'role.rbac.authorization.k8s.io/reader created'],
      [['create', 'rolebinding', 'robot-reads', '--role=reader', '--serviceaccount=default:robot'], 'rolebinding.rbac.authorization.k8s.io/robot-reads created'],
      [['create', 'poddisruptionbudget', 'keep-one', '--selector=app=api', '--min-available=1'], 'poddisruptionbudget.policy/keep-one created'],
      [['create', 'ingress', 'front', '--rule=example.com/api=api:80'], 'ingress.networking.k8s.io/front created'],
    ];
    for (const [args, out] of creates) expect(await k.ok(args)).to.equal(`${out}\n`);
    expect(await k.ok(['get', 'cronjobs'])).to.match(/^NAME\s+SCHEDULE\s+TIMEZONE\s+SUSPEND\s+ACTIVE\s+LAST SCHEDULE\s+AGE\nnightly\s+0 3 \* \* \*\s+<none>\s+False\s+0\s+<none>\s+\d+s\n$/);
    expect(await k.ok(['get', 'rolebinding', 'robot-reads', '-o', 'wide'])).to.match(/robot-reads\s+Role\/reader\s+\d+s\s+default\/robot\n$/);
    expect(await k.ok(['get', 'ingress', 'front', '-o', 'jsonpath={.spec.rules[0].host} {.spec.rules[0].http.paths[0].backend.service.name}'])).to.equal('example.com api');
    expect(await k.ok(['get', 'pdb'])).to.match(/^NAME\s+MIN AVAILABLE\s+MAX UNAVAILABLE\s+ALLOWED DISRUPTIONS\s+AGE\nkeep-one\s+1\s+N\/A\s+0\s+\d+s\n$/);
  });

  it('prints events with kube\'s columns, core and events.k8s.io alike', async () => {
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await k.ok(
      ['apply', '-f', '-'],
      [
        stringify({
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { name: 'api.1' },
          involvedObject: { kind: 'Pod', name: 'api-1', namespace: 'default' },
          reason: 'Started',
          type: 'Normal',
          message: 'Started container nginx',
          count: 3,
          firstTimestamp: now,
          lastTimestamp: now,
          source: { component: 'kubelet', host: 'node-1' },
        }),
        stringify({
          apiVersion: 'events.k8s.io/v1',
          kind: 'Event',
          metadata: { name: 'api.2' },
          regarding: { kind: 'Deployment', name: 'api', namespace: 'default' },
          reason: 'ScalingReplicaSet',
          type: 'Normal',
          note: 'Scaled up replica set api-1 to 2',
          action: 'Scale',
          eventTime: new Date().toISOString().replace('Z', '000Z'),
          reportingController: 'deployment-controller',
          reportingInstance: 'controller-manager-1',
        }),
      ].join('---\n'),
    );
    const out = await k.ok(['get', 'events']);
    expect(out).to.match(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\n/);
    expect(out).to.match(/\n\d+s\s+Normal\s+Started\s+pod\/api-1\s+Started container nginx\n/);
    expect(out).to.match(/\n\d+s\s+Normal\s+ScalingReplicaSet\s+deployment\/api\s+Scaled up replica set api-1 to 2\n/);
    const wide = await k.ok(['get', 'events', '-o', 'wide']);
    expect(wide).to.match(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+SUBOBJECT\s+SOURCE\s+MESSAGE\s+FIRST SEEN\s+COUNT\s+NAME\n/);
    expect(wide).to.match(/kubelet, node-1\s+Started container nginx\s+\d+s\s+3\s+api\.1\n/);
    expect(wide).to.match(/deployment-controller, controller-manager-1\s+Scaled up replica set api-1 to 2\s+\d+s\s+1\s+api\.2\n/);
  });

  it('answers logs, exec and attach with a Status that says the server runs no containers', async () => {
    await k.ok(['run', 'shell', '--image=busybox']);
    const logs = await k.run(['logs', 'shell']);
    expect([logs.code, logs.stderr.trim()]).to.deep.equal([1, 'Error from server (BadRequest): cannot show the logs of pod "shell": this API server (rxkube) runs no containers']);
    const exec = await k.run(['exec', 'shell', '--', 'ls']);
    expect([exec.code, exec.stderr.trim()]).to.deep.equal([1, 'Error from server (BadRequest): cannot exec into pod "shell": this API server (rxkube) runs no containers']);
    const attach = await k.run(['attach', 'shell']);
    expect(attach.code).to.equal(1);
    expect(attach.stderr).to.contain('Error from server (BadRequest): cannot attach to pod "shell": this API server (rxkube) runs no containers');
    const missing = await k.run(['logs', 'nobody']);
    expect(missing.stderr).to.contain('pods "nobody" not found');
  });
});
