import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { controller, silentLogger } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { waitFor } from '../support/waitFor.js';

const configmaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'default' } as const;

describe('controller({ sharding })', () => {
  it('names what is wrong with the sharding options', () => {
    const base = { name: 'x', kubeConfig: new KubeConfig(), for: configmaps, reconcile: () => undefined };
    expect(() => controller({ ...base, sharding: { replicas: 0, by: 'uid' } })).to.throw(TypeError, "sharding.replicas must be 'auto' or a whole number ≥ 1, got 0");
    expect(() => controller({ ...base, sharding: { replicas: 'auto', by: 'name' as 'uid' } })).to.throw(TypeError, "sharding.by must be 'uid' or 'namespace', got name");
    expect(() => controller({ ...base, sharding: { replicas: 'auto', by: 'uid' }, leaderElection: { lease: 'default/x' } })).to.throw(TypeError, 'sharding and leaderElection cannot both be set');
  });

  describe('one replica on the embedded server', () => {
    let server: ApiServer;
    before(async () => {
      server = await startApiServer();
    });
    after(async () => {
      await server.close();
    });

    it('owns every slot alone, reconciles every key, says so in rxkube_shard_* and is not ready while fewer replicas than asked are live', async () => {
      const api = server.kubeConfig().makeApiClient(CoreV1Api);
      for (const name of ['a', 'b', 'c']) await api.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name } } });
      const reconciled = new Set<string>();
      const stop = new AbortController();
      const c = controller({
        name: 'solo',
        kubeConfig: server.kubeConfig(),
        logger: silentLogger,
        signal: stop.signal,
        for: configmaps,
        sharding: { replicas: 2, by: 'uid', identity: 'only', leaseDuration: 2_000, renewDeadline: 1_500, retryPeriod: 250 },
        reconcile: (key) => {
          reconciled.add(key);
        },
      });
      const ended = new Promise<void>((resolve, reject) => c.subscribe({ error: reject, complete: resolve }));
      try {
        await waitFor(() => c.shards()?.active.size === 256 && reconciled.size === 3, 'the replica to own every slot and reconcile every key', 30_000);
        const text = await c.registry.metrics();
        expect(text).to.contain('rxkube_shard_owned_slots{controller="solo"} 256');
        expect(text).to.contain('rxkube_shard_owned_ranges{controller="solo"} 1');
        expect(text).to.contain('rxkube_shard_owned_keys{controller="solo"} 3');
        expect(text).to.contain('rxkube_shard_members{controller="solo"} 1');
        expect(text).to.contain('rxkube_shard_handoffs_total{controller="solo",direction="gained"} 256');
        expect(c.notReady()).to.include('sharding: 1 of 2 replicas live');
        const lease = server.requestLog.filter((r) => r.resource === 'leases' && r.method === 'PUT').map((r) => r.name);
        expect(lease).to.include('solo-shard-only');
      } finally {
        stop.abort();
        await ended;
      }
      // Leaving gives the Lease up: no holder, no slots.
      const { spec, metadata } = await server.kubeConfig().makeApiClient((await import('@kubernetes/client-node')).CoordinationV1Api).readNamespacedLease({ namespace: 'default', name: 'solo-shard-only' });
      expect(spec?.holderIdentity ?? '').to.equal('');
      expect(metadata?.annotations?.['rxkube.io/shard-slots']).to.equal('');
    });
  });
});
