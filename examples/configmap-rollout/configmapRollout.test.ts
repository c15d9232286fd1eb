import { expect } from 'chai';
import { silentLogger } from 'rxkube';
import { dilatedScheduler } from '../../test/support/dilatedScheduler.js';
import { waitFor } from '../../test/support/waitFor.js';
import { useEmbeddedServer } from '../support/harness.js';
import { configMapRolloutController } from './controller.js';
import { configHash } from './hash.js';
import { configMapUses } from './references.js';
import { CONFIG_HASH, type ConfigMap, type Deployment, type PodSpec } from './types.js';

const deploymentsIn = (namespace: string) => ({ group: 'apps', version: 'v1', resource: 'deployments', namespace });

function deploymentUsing(namespace: string, name: string, pod: Omit<PodSpec, 'containers'> & { container?: PodSpec['containers'] }): Deployment {
  const labels = { app: name };
  const { container, ...rest } = pod;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: container ?? [{ name: 'app' }], ...rest } },
    },
  };
}

describe('examples/configmap-rollout against the embedded API server', () => {
  const h = useEmbeddedServer();

  beforeEach(async () => {
    await h.client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'other' } });
  });

  // Time runs 100× faster: the default two-minute cache sync bound would be 1.2 s of wall time on a loaded machine.
  const syncBound = 100 * 120_000;
  const start = () => h.start((signal) => configMapRolloutController(h.server.kubeConfig(), { logger: silentLogger, scheduler: dilatedScheduler(100), cacheSyncTimeout: syncBound, concurrency: 2, signal }));

  const stamp = (name: string, namespace = 'default') =>
    (h.server.snapshot(deploymentsIn(namespace)).find((d) => d.metadata.name === name) as Deployment | undefined)?.spec?.template?.metadata
      ?.annotations?.[CONFIG_HASH];
  const hashOf = (deploymentName: string, namespace = 'default') => {
    const deployment = h.server.snapshot(deploymentsIn(namespace)).find((d) => d.metadata.name === deploymentName) as Deployment;
    const configMaps = h.server.snapshot({ group: '', version: 'v1', resource: 'configmaps', namespace }) as ConfigMap[];
    return configHash(configMapUses(deployment), (name) => configMaps.find((c) => c.metadata.name === name)).hash;
  };
  const events = (reason: string) => h.events(reason);
  const createConfigMap = (name: string, data: Record<string, string>, namespace = 'default') =>
    h.client.create<ConfigMap>({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data });
  const setData = (name: string, data: Record<string, string>) =>
    h.client.patchMerge({ apiVersion: 'v1', kind: 'ConfigMap', name, namespace: 'default' }, { data });
  const settled = (names: string[]) => names.every((n) => stamp(n) !== undefined && stamp(n) === hashOf(n));

  it('stamps the hash of the ConfigMaps a Deployment uses on its pod template, and records it', async () => {
    await createConfigMap('settings', { level: 'info' });
    await h.client.create(deploymentUsing('default', 'web', { volumes: [{ name: 'config', configMap: { name: 'settings' } }] }));
    start();
    await waitFor(() => settled(['web']), 'the stamp');
    expect(stamp('web')).to.match(/^[0-9a-f]{64}$/);
    await waitFor(() => events('ConfigHashStamped').length === 1, 'the Event');
    expect(events('ConfigHashStamped')[0]).to.include({ type: 'Normal', note: 'stamped the hash of configmap "settings"' });
  });

  it('on a data change, restarts every Deployment that uses the ConfigMap (volume, projected, envFrom, env) and no other', async () => {
    await createConfigMap('shared', { a: '1' });
    await createConfigMap('unrelated', { b: '1' });
    await createConfigMap('shared', { a: '1' }, 'other');
    await h.client.create(deploymentUsing('default', 'by-volume', { volumes: [{ name: 'c', configMap: { name: 'shared' } }] }));
    await h.client.create(deploymentUsing('default', 'by-projection', { volumes: [{ name: 'c', projected: { sources: [{ configMap: { name: 'shared' } }] } }] }));
    await h.client.create(deploymentUsing('default', 'by-envfrom', { container: [{ name: 'app', envFrom: [{ configMapRef: { name: 'shared' } }] }] }));
    await h.client.create(
      deploymentUsing('default', 'by-env', { initContainers: [{ name: 'init', env: [{ name: 'A', valueFrom: { configMapKeyRef: { name: 'shared', key: 'a' } } }] }] }),
    );
    await h.client.create(deploymentUsing('default', 'bystander', { volumes: [{ name: 'c', configMap: { name: 'unrelated' } }] }));
    await h.client.create(deploymentUsing('other', 'by-volume', { volumes: [{ name: 'c', configMap: { name: 'shared' } }] }));
    const users = ['by-volume', 'by-projection', 'by-envfrom', 'by-env'];
    start();
    await waitFor(() => settled([...users, 'bystander']) && stamp('by-volume', 'other') !== undefined, 'the first stamps');
    const before = Object.fromEntries([...users, 'bystander'].map((n) => [n, stamp(n)]));
    const otherBefore = stamp('by-volume', 'other');

    await setData('shared', { a: '2' });
    await waitFor(() => users.every((n) => stamp(n) !== before[n]) && settled(users), 'the restarts');
    expect(stamp('bystander')).to.equal(before.bystander);
    expect(stamp('by-volume', 'other')).to.equal(otherBefore);
    await waitFor(() => events('ConfigChanged').length === users.length, 'an Event per restart');
    expect(events('ConfigChanged').map((e) => e.regarding.name).sort()).to.deep.equal([...users].sort());
  });

  it('writes nothing when the hash is already right: a label change, a restart of the controller', async () => {
    await createConfigMap('settings', { level: 'info' });
    await h.client.create(deploymentUsing('default', 'web', { volumes: [{ name: 'config', configMap: { name: 'settings' } }] }));
    start();
    await waitFor(() => settled(['web']), 'the stamp');
    await h.client.patchMerge({ apiVersion: 'v1', kind: 'ConfigMap', name: 'settings', namespace: 'default' }, { metadata: { labels: { team: 'a' } } });
    await waitFor(() => h.outcomes.length >= 3, 'the reconcile of the label change');
    await h.stopAll();
    await waitFor(() => h.server.openWatches() === 0, 'the controller to stop');
    h.outcomes.length = 0;
    h.server.clearRequestLog();
    start();
    await waitFor(() => h.outcomes.some((o) => o.key === 'default/web'), 'the reconcile after the restart');
    const rolled = h.server.snapshot(deploymentsIn('default')).find((d) => d.metadata.name === 'web')!;
    expect(rolled.metadata.generation).to.equal(2); // created, stamped once: never again
    expect(h.server.requestLog.filter((r) => r.verb === 'patch')).to.deep.equal([]);
  });

  it('waits for a missing required ConfigMap with a Warning, stamps an optional missing one, and follows when they appear', async () => {
    await h.client.create(deploymentUsing('default', 'needs', { container: [{ name: 'app', envFrom: [{ configMapRef: { name: 'late' } }] }] }));
    await h.client.create(deploymentUsing('default', 'optional', { volumes: [{ name: 'c', configMap: { name: 'maybe', optional: true } }] }));
    start();
    await waitFor(() => settled(['optional']) && events('ConfigMapNotFound').length === 1, 'the optional stamp and the Warning');
    expect(stamp('needs')).to.equal(undefined);
    expect(events('ConfigMapNotFound')[0]).to.include({ type: 'Warning', note: 'waiting for configmap "late" before stamping the config hash' });
    const optionalBefore = stamp('optional');
    await createConfigMap('late', { x: '1' });
    await createConfigMap('maybe', { y: '1' });
    await waitFor(() => settled(['needs', 'optional']) && stamp('optional') !== optionalBefore, 'the stamps after they appeared');
  });

  it('re-stamps when the template starts using another ConfigMap, and converges through failed writes', async () => {
    await createConfigMap('one', { v: '1' });
    await createConfigMap('two', { v: '2' });
    await h.client.create(deploymentUsing('default', 'web', { volumes: [{ name: 'a', configMap: { name: 'one' } }] }));
    h.server.faults.failNext(3, { code: 500, message: 'injected', verb: 'patch', resource: 'deployments' });
    start();
    await waitFor(() => settled(['web']), 'the stamp through the faults');
    expect(h.outcomes.filter((o) => o.result === 'error').length).to.be.greaterThan(0);
    const first = stamp('web');
    await h.client.patchMerge(
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'default' },
      { spec: { template: { spec: { volumes: [{ name: 'a', configMap: { name: 'one' } }, { name: 'b', configMap: { name: 'two' } }] } } } },
    );
    await waitFor(() => settled(['web']) && stamp('web') !== first, 'the new stamp');
  });
});

describe('examples/configmap-rollout: which ConfigMaps, which hash', () => {
  it('finds each ConfigMap once, sorted, optional only when every use says so, and skips odd fields', () => {
    const deployment = deploymentUsing('default', 'web', {
      volumes: [
        { name: 'a', configMap: { name: 'z', optional: true } },
        { name: 'b', configMap: { name: 'm', optional: true } },
        { name: 'odd', configMap: { name: 7 as unknown as string } },
      ],
      container: [{ name: 'app', envFrom: [{ configMapRef: { name: 'm' } }], env: 'nope' as unknown as [] }],
    });
    expect(configMapUses(deployment)).to.deep.equal([
      { name: 'm', optional: false },
      { name: 'z', optional: true },
    ]);
    expect(configMapUses({ metadata: { name: 'x' } })).to.deep.equal([]);
  });

  it('hashes data and binaryData only, whatever the order of keys', () => {
    const uses = [{ name: 'c', optional: false }];
    const cm = (data: Record<string, string>, labels?: Record<string, string>): ConfigMap => ({ metadata: { name: 'c', ...(labels ? { labels } : {}) }, data });
    const h = (c: ConfigMap) => configHash(uses, () => c).hash;
    expect(h(cm({ a: '1', b: '2' }))).to.equal(h(cm({ b: '2', a: '1' }, { team: 'x' })));
    expect(h(cm({ a: '1', b: '2' }))).to.not.equal(h(cm({ a: '1', b: '3' })));
    expect(h({ metadata: { name: 'c' }, binaryData: { k: 'AA==' } })).to.not.equal(h({ metadata: { name: 'c' }, data: { k: 'AA==' } }));
    expect(configHash(uses, () => undefined)).to.deep.equal({ missing: ['c'] });
  });
});
