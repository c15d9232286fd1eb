import { CoreV1Api, PatchStrategy, RbacAuthorizationV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { expect } from 'chai';
import { stringify } from 'yaml';
import { describeKubectl, kubectlAgainstServer } from './kubectl.helpers.js';

/**
 * Re-applying a manifest with fields taken out leaves nothing of them behind, as in kube: no
 * `env: []`, `annotations: {}` or `limits: {}`. Server-side, structured-merge-diff removes a field
 * nobody owns anything in any more; client-side, kubectl's patch deletes the items and kube's Go
 * types drop the empty maps and lists it leaves (`omitempty`). Either way the object ends as a
 * fresh apply of the shorter manifest makes it.
 */

type Json = Record<string, unknown>;

function deployment(name: string, full: boolean, emptied = false): string {
  const container: Json = { name: 'web', image: 'nginx:1.27' };
  const podSpec: Json = { containers: [container] };
  const templateMeta: Json = { labels: { app: name } };
  if (full) {
    Object.assign(container, {
      ports: [{ containerPort: 80 }, { containerPort: 81 }],
      env: [{ name: 'A', value: '1' }],
      resources: { limits: { cpu: '1' }, requests: { cpu: '1' } },
      securityContext: { runAsUser: 1000 },
      volumeMounts: [{ name: 'v', mountPath: '/v' }],
    });
    Object.assign(podSpec, { nodeSelector: { disk: 'ssd' }, tolerations: [{ key: 'k', operator: 'Exists' }], volumes: [{ name: 'v', emptyDir: {} }] });
    templateMeta.annotations = { x: 'y' };
  } else if (emptied) {
    // What someone who empties the fields rather than deleting them writes.
    Object.assign(container, { ports: [], env: [], resources: { limits: {} }, volumeMounts: [] });
    Object.assign(podSpec, { nodeSelector: {}, volumes: [] });
    templateMeta.annotations = {};
  }
  return stringify({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels: { app: name }, ...(full ? { annotations: { team: 'a' } } : {}) },
    spec: { replicas: 2, selector: { matchLabels: { app: name } }, template: { metadata: templateMeta, spec: podSpec } },
  });
}

interface Read {
  metadata: { labels?: Json; annotations?: Json; managedFields?: { manager: string; fieldsV1: Json }[] };
  spec: Json;
}

/** The spec with the name-dependent labels made alike, so two deployments compare. */
function specOf(read: Read, name: string): string {
  return JSON.stringify(read.spec).replaceAll(`"${name}"`, '"NAME"');
}

describeKubectl('kubectl apply again with fields taken out', function () {
  this.timeout(60_000);
  const suite = kubectlAgainstServer('rxkube-kubectl-reapply-');

  async function read(name: string): Promise<Read> {
    return JSON.parse(await suite.k.ok(['get', 'deployment', name, '-o', 'json', '--show-managed-fields'])) as Read;
  }

  it('server-side: leaves the object, and the manager\'s fields, as a fresh apply of the shorter manifest', async () => {
    await suite.k.ok(['apply', '--server-side', '-f', '-'], deployment('ssa', true));
    expect(await suite.k.ok(['apply', '--server-side', '-f', '-'], deployment('ssa', false))).to.equal('deployment.apps/ssa serverside-applied\n');
    await suite.k.ok(['apply', '--server-side', '-f', '-'], deployment('ssa-fresh', false));
    const [reapplied, fresh] = [await read('ssa'), await read('ssa-fresh')];
    expect(specOf(reapplied, 'ssa')).to.equal(specOf(fresh, 'ssa-fresh'));
    expect(reapplied.metadata.annotations).to.equal(undefined);
    const template = reapplied.spec.template as { metadata: Json; spec: { containers: Json[] } };
    expect(template.metadata).to.deep.equal({ labels: { app: 'ssa' } });
    expect(Object.keys(template.spec.containers[0] ?? {})).to.not.include.members(['env', 'ports', 'securityContext', 'volumeMounts']);
    expect(template.spec.containers[0]?.resources).to.deep.equal({});
    const fields = (read: Read, name: string): string => JSON.stringify(read.metadata.managedFields?.map((e) => [e.manager, e.fieldsV1])).replaceAll(`"f:${name}"`, '"f:NAME"');
    expect(fields(reapplied, 'ssa')).to.equal(fields(fresh, 'ssa-fresh'));
  });

  it('client-side: leaves nothing emptied behind, whether the manifest deletes the fields or empties them', async () => {
    for (const emptied of [false, true]) {
      const name = emptied ? 'csa-emptied' : 'csa';
      await suite.k.ok(['apply', '-f', '-'], deployment(name, true));
      expect(await suite.k.ok(['apply', '-f', '-'], deployment(name, false, emptied))).to.equal(`deployment.apps/${name} configured\n`);
      await suite.k.ok(['apply', '-f', '-'], deployment(`${name}-fresh`, false, emptied));
      expect(specOf(await read(name), name), name).to.equal(specOf(await read(`${name}-fresh`), `${name}-fresh`));
      expect(specOf(await read(name), name), name).to.not.match(/"(env|ports|volumeMounts|volumes|nodeSelector|annotations|limits)"/);
    }
  });

  it('a merge patch that empties a map or list through client-node stores neither, as kube\'s Go types do', async () => {
    const core = suite.server.kubeConfig().makeApiClient(CoreV1Api);
    const created = await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'empty' }, data: {}, binaryData: {} } });
    expect(created).to.not.have.property('data');
    expect(created).to.not.have.property('binaryData');
    await core.createNamespacedPod({
      namespace: 'default',
      body: { metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i', env: [{ name: 'A', value: '1' }] }], nodeSelector: { a: 'b' } } },
    });
    const patched = await core.patchNamespacedPod(
      { namespace: 'default', name: 'p', body: { spec: { nodeSelector: { a: null }, containers: [{ name: 'c', image: 'i', env: [] }] } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    expect(patched.spec).to.not.have.property('nodeSelector');
    expect(patched.spec?.containers[0]).to.not.have.property('env');
    // A list whose Go field has no omitempty is written even when empty (k8s.io/api: ClusterRole.rules).
    const rbac = suite.server.kubeConfig().makeApiClient(RbacAuthorizationV1Api);
    const role = await rbac.createClusterRole({ body: { metadata: { name: 'nothing' }, rules: [] } });
    expect(role.rules).to.deep.equal([]);
  });
});
