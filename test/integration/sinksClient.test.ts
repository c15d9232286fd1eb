import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { silentLogger, kubeClient, type KubeClient, isConflict, isForbidden, isInvalid, isNotFound, isTooManyRequests, KubeApiError, type KubeObject } from 'rxkube';
import { InvalidTargetError, MutateIdentityError } from '../../src/sinks/client/kubeClient.js';
import { ConflictRetriesExhaustedError } from '../../src/sinks/client/errors.js';
import { UnknownResourceError } from '../../src/sinks/client/resources.js';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { rejection } from '../sinks/rejection.js';
import { RecordingScheduler } from '../sinks/recordingScheduler.js';

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

interface Deployment extends KubeObject {
  spec: { replicas?: number; selector: { matchLabels: Record<string, string> }; template: object };
  status?: { replicas?: number; readyReplicas?: number; observedGeneration?: number };
}

const cm = (name: string, data: Record<string, string> = {}): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'default' },
  data,
});

const deployment = (name: string): Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'default' },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'web', image: 'nginx' }] } },
  },
});

describe('sinks client against the embedded API server', () => {
  let server: ApiServer;
  let scheduler: RecordingScheduler;
  let client: KubeClient;

  beforeEach(async () => {
    server = await startApiServer({ logger: silentLogger });
    scheduler = new RecordingScheduler();
    client = kubeClient(server.kubeConfig(), { scheduler, logger: silentLogger, random: () => 0.5 });
  });
  afterEach(() => server.close());

  const writes = (resource: string) =>
    server.requestLog.filter((r) => r.resource === resource && ['create', 'update', 'patch', 'delete'].includes(r.verb));

  describe('createOrUpdate', () => {
    it('creates a missing object from a mutated copy of the one given, and says created', async () => {
      const given = cm('settings', { a: '1' });
      const { result, object } = await client.createOrUpdate(given, (o) => {
        o.data = { ...o.data, b: '2' };
      });
      expect(result).to.equal('created');
      expect(object.data).to.deep.equal({ a: '1', b: '2' });
      expect(object.metadata.uid).to.be.a('string');
      expect(given.data).to.deep.equal({ a: '1' });
    });

    it('writes nothing and says unchanged when mutate leaves the stored object as it is', async () => {
      await client.create(cm('settings', { a: '1' }));
      server.clearRequestLog();
      const { result, object } = await client.createOrUpdate(cm('settings'), (o) => {
        o.data = { a: '1' };
      });
      expect(result).to.equal('unchanged');
      expect(object.data).to.deep.equal({ a: '1' });
      expect(writes('configmaps')).to.deep.equal([]);
    });

    it('updates the stored object guarded by its resourceVersion when mutate changes it, and says updated', async () => {
      const created = await client.create(cm('settings', { a: '1', keep: 'x' }));
      server.clearRequestLog();
      const { result, object } = await client.createOrUpdate(cm('settings'), (o) => {
        o.data = { ...o.data, a: '2' };
      });
      expect(result).to.equal('updated');
      expect(object.data).to.deep.equal({ a: '2', keep: 'x' });
      expect(object.metadata.resourceVersion).to.not.equal(created.metadata.resourceVersion);
      expect(writes('configmaps').map((r) => r.verb)).to.deep.equal(['update']);
    });

    it('re-reads and runs mutate again when the object changed between its read and its write (a real 409)', async () => {
      await client.create(cm('settings', { a: '1' }));
      let calls = 0;
      const { result, object } = await client.createOrUpdate(cm('settings'), async (o) => {
        calls += 1;
        if (calls === 1) {
          // Someone else writes after our read: our update carries a stale resourceVersion.
          await client.patchMerge(cm('settings'), { data: { other: 'yes' } });
        }
        o.data = { ...o.data, mine: String(calls) };
      });
      expect(calls).to.equal(2);
      expect(result).to.equal('updated');
      expect(object.data).to.deep.equal({ a: '1', other: 'yes', mine: '2' });
      expect(server.requestLog.filter((r) => r.verb === 'update').map((r) => r.status)).to.deep.equal([409, 200]);
      expect(scheduler.delays).to.deep.equal([10.5]);
    });

    it('retries 409s with client-go DefaultRetry waits and succeeds when the conflicts stop', async () => {
      await client.create(cm('settings', { a: '1' }));
      server.faults.failNext(3, { code: 409, reason: 'Conflict', message: 'the object has been modified', verb: 'update' });
      const { result, object } = await client.createOrUpdate(cm('settings'), (o) => {
        o.data = { a: '2' };
      });
      expect(result).to.equal('updated');
      expect(object.data).to.deep.equal({ a: '2' });
      expect(server.requestLog.filter((r) => r.verb === 'update').map((r) => r.status)).to.deep.equal([409, 409, 409, 200]);
      // 10 ms plus half of the 10 % jitter, between attempts.
      expect(scheduler.delays).to.deep.equal([10.5, 10.5, 10.5]);
    });

    it('gives up after 5 conflicting attempts with an error that says so', async () => {
      await client.create(cm('settings', { a: '1' }));
      server.faults.failNext(5, { code: 409, reason: 'Conflict', message: 'the object has been modified', verb: 'update' });
      const err = await rejection(
        client.createOrUpdate(cm('settings'), (o) => {
          o.data = { a: '2' };
        }),
      );
      expect(err).to.be.instanceOf(ConflictRetriesExhaustedError);
      expect((err as Error).message).to.equal(
        'update configmaps "default/settings": gave up after 5 attempts, each re-reading the object after a 409 Conflict; ' +
          'last conflict: the object has been modified (409 Conflict)',
      );
      expect(isConflict(err)).to.equal(true);
      expect(server.requestLog.filter((r) => r.verb === 'update')).to.have.length(5);
      expect(server.requestLog.filter((r) => r.verb === 'get')).to.have.length(5);
      expect(scheduler.delays).to.have.length(4);
    });

    it('honours a configured conflict backoff', async () => {
      const custom = kubeClient(server.kubeConfig(), {
        scheduler,
        logger: silentLogger,
        random: () => 0,
        conflictBackoff: { steps: 3, duration: 100, factor: 2 },
      });
      await custom.create(cm('settings', { a: '1' }));
      server.faults.failNext(3, { code: 409, reason: 'Conflict', verb: 'update' });
      const err = await rejection(custom.createOrUpdate(cm('settings'), (o) => void (o.data = { a: '2' })));
      expect((err as ConflictRetriesExhaustedError).attempts).to.equal(3);
      expect(scheduler.delays).to.deep.equal([100, 200]);
    });

    it('treats a create that lost the race to another creator as a conflict: re-reads and updates', async () => {
      let calls = 0;
      const { result, object } = await client.createOrUpdate(cm('settings'), async (o) => {
        calls += 1;
        // A rival creates the object after our read found nothing: our create meets 409 AlreadyExists.
        if (calls === 1) await client.create(cm('settings', { rival: 'yes' }));
        o.data = { ...o.data, mine: 'yes' };
      });
      expect(calls).to.equal(2);
      expect(result).to.equal('updated');
      expect(object.data).to.deep.equal({ rival: 'yes', mine: 'yes' });
      expect(server.requestLog.filter((r) => r.verb === 'create').map((r) => r.status)).to.deep.equal([201, 409]);
    });

    it('refuses a mutate that renames the object, without writing', async () => {
      await client.create(cm('settings'));
      server.clearRequestLog();
      const err = await rejection(
        client.createOrUpdate(cm('settings'), (o) => {
          o.metadata.name = 'other';
        }),
      );
      expect(err).to.be.instanceOf(MutateIdentityError);
      expect((err as Error).message).to.match(/must not change the name or namespace \(default\/settings became default\/other\)/);
      expect(writes('configmaps')).to.deep.equal([]);
    });
  });

  describe('list', () => {
    it('reads every page straight from the server, in a namespace or all, with selectors, each item with its apiVersion and kind', async () => {
      for (let i = 0; i < 520; i++) server.put({ version: 'v1', resource: 'configmaps' }, { ...cm(`c${String(i).padStart(3, '0')}`), metadata: { name: `c${String(i).padStart(3, '0')}`, namespace: 'default', labels: { even: String(i % 2 === 0) } } });
      server.put({ version: 'v1', resource: 'configmaps' }, { ...cm('elsewhere'), metadata: { name: 'elsewhere', namespace: 'kube-system' } });
      const all = await client.list<ConfigMap>({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default' });
      expect(all).to.have.length(520);
      expect(all[0]).to.deep.include({ apiVersion: 'v1', kind: 'ConfigMap' });
      expect(server.requestLog.filter((r) => r.verb === 'list').map((r) => r.query.limit)).to.deep.equal(['500', '500']);
      const even = await client.list({ apiVersion: 'v1', kind: 'ConfigMap' }, { labelSelector: 'even=true' });
      expect(even).to.have.length(260);
      expect((await client.list({ apiVersion: 'v1', kind: 'ConfigMap' })).map((o) => o.metadata.namespace)).to.include('kube-system');
    });

    it('says which selector the server refused', async () => {
      const err = await rejection(client.list({ apiVersion: 'v1', kind: 'ConfigMap' }, { labelSelector: 'a in (' }));
      expect((err as KubeApiError).code).to.equal(400);
      expect((err as KubeApiError).message).to.match(/^list configmaps: /);
    });
  });

  describe('server-side apply', () => {
    it('creates and updates with application/apply-patch+yaml under the field manager', async () => {
      const applied = await client.apply(cm('settings', { a: '1' }), { fieldManager: 'team-a' });
      expect(applied.data).to.deep.equal({ a: '1' });
      const again = await client.apply(cm('settings', { a: '2' }), { fieldManager: 'team-a' });
      expect(again.data).to.deep.equal({ a: '2' });
      const entry = server.requestLog.filter((r) => r.verb === 'patch').at(-1);
      expect(entry?.query.fieldManager).to.equal('team-a');
      const managers = (again.metadata.managedFields as Array<{ manager: string; operation: string }>).map((m) => `${m.manager}/${m.operation}`);
      expect(managers).to.deep.equal(['team-a/Apply']);
    });

    it('fails with a 409 conflict naming the field another manager owns, and takes it over with force', async () => {
      await client.apply(cm('settings', { a: '1' }), { fieldManager: 'team-a' });
      const err = await rejection(client.apply(cm('settings', { a: '2' }), { fieldManager: 'team-b' }));
      expect(err).to.be.instanceOf(KubeApiError);
      expect(isConflict(err)).to.equal(true);
      expect((err as Error).message).to.match(/conflict with "team-a".*\.data\.a/);
      expect(scheduler.delays, 'an ownership conflict is not retried').to.deep.equal([]);
      const forced = await client.apply(cm('settings', { a: '2' }), { fieldManager: 'team-b', force: true });
      expect(forced.data).to.deep.equal({ a: '2' });
      expect(server.requestLog.filter((r) => r.verb === 'patch').at(-1)?.query.force).to.equal('true');
    });

    it('uses the client field manager by default and leaves managedFields of the object out of the request', async () => {
      const created = await client.apply(cm('settings', { a: '1' }));
      const reapplied = await client.apply({ ...created, data: { a: '3' } });
      expect(reapplied.data).to.deep.equal({ a: '3' });
      expect(server.requestLog.filter((r) => r.verb === 'patch').every((r) => r.query.fieldManager === 'rxkube')).to.equal(true);
    });
  });

  describe('patches', () => {
    it('merge-patches, deleting a field with null', async () => {
      await client.create(cm('settings', { a: '1', b: '2' }));
      const patched = await client.patchMerge<ConfigMap>(cm('settings'), { data: { b: null, c: '3' } });
      expect(patched.data).to.deep.equal({ a: '1', c: '3' });
    });

    it('JSON-patches, and a failing test operation is a 422 Invalid that changes nothing', async () => {
      await client.create(cm('settings', { a: '1' }));
      const ref = { apiVersion: 'v1', kind: 'ConfigMap', name: 'settings', namespace: 'default' };
      const patched = await client.patchJson<ConfigMap>(ref, [
        { op: 'test', path: '/data/a', value: '1' },
        { op: 'add', path: '/data/b', value: '2' },
      ]);
      expect(patched.data).to.deep.equal({ a: '1', b: '2' });
      const err = await rejection(client.patchJson(ref, [{ op: 'test', path: '/data/a', value: 'nope' }, { op: 'remove', path: '/data/a' }]));
      expect(isInvalid(err)).to.equal(true);
      expect((await client.get<ConfigMap>(ref)).data).to.deep.equal({ a: '1', b: '2' });
    });

    it('refuses the wrong kind of patch body for the method', async () => {
      expect(String(await rejection(client.patchMerge(cm('x'), [] as unknown as object)))).to.match(/TypeError: .*use patchJson/);
      expect(String(await rejection(client.patchJson(cm('x'), {} as never)))).to.match(/TypeError: .*array of JSON patch operations/);
    });
  });

  describe('status', () => {
    it('updates the status subresource with mutate, only when the status changed', async () => {
      await client.create(deployment('web'));
      const first = await client.updateStatus(deployment('web'), (d) => {
        d.status = { replicas: 1, readyReplicas: 1 };
      });
      expect(first.result).to.equal('updated');
      expect(first.object.status).to.include({ replicas: 1, readyReplicas: 1 });
      server.clearRequestLog();
      const second = await client.updateStatus(deployment('web'), (d) => {
        d.status = { ...d.status, replicas: 1, readyReplicas: 1 };
      });
      expect(second.result).to.equal('unchanged');
      expect(writes('deployments')).to.deep.equal([]);
    });

    it('writes the status of the object given, and onto a fresh read after a conflict', async () => {
      const created = await client.create(deployment('web'));
      await client.patchMerge(created, { metadata: { labels: { touched: 'yes' } } });
      const stale = { ...created, status: { replicas: 3 } };
      const { result, object } = await client.updateStatus(stale);
      expect(result).to.equal('updated');
      expect(object.status?.replicas).to.equal(3);
      expect(object.metadata.labels).to.deep.equal({ touched: 'yes' });
      expect(server.requestLog.filter((r) => r.verb === 'update' && r.subresource === 'status').map((r) => r.status)).to.deep.equal([409, 200]);
    });

    it('does not change the spec through the status subresource', async () => {
      await client.create(deployment('web'));
      const { object } = await client.updateStatus(deployment('web'), (d) => {
        d.spec.replicas = 7;
        d.status = { replicas: 1 };
      });
      expect(object.spec.replicas).to.equal(1);
      expect(object.status?.replicas).to.equal(1);
    });

    it('merge-patches and JSON-patches the status subresource', async () => {
      await client.create(deployment('web'));
      const merged = await client.patchStatus<Deployment>(deployment('web'), { status: { replicas: 2 } });
      expect(merged.status?.replicas).to.equal(2);
      const jsonPatched = await client.patchStatus<Deployment>(deployment('web'), [{ op: 'replace', path: '/status/replicas', value: 4 }]);
      expect(jsonPatched.status?.replicas).to.equal(4);
      expect(server.requestLog.filter((r) => r.verb === 'patch').every((r) => r.subresource === 'status')).to.equal(true);
    });
  });

  describe('remove', () => {
    it('deletes, and says absent for an object already gone', async () => {
      await client.create(cm('settings'));
      expect((await client.remove(cm('settings'))).result).to.equal('deleted');
      expect(isNotFound(await rejection(client.get(cm('settings'))))).to.equal(true);
      expect((await client.remove(cm('settings'))).result).to.equal('absent');
    });

    it('says deleting while finalizers hold the object, and passes the propagation policy', async () => {
      await client.create({ ...cm('settings'), metadata: { ...cm('settings').metadata, finalizers: ['example.com/hold'] } });
      const { result, object } = await client.remove(cm('settings'), { propagationPolicy: 'Foreground' });
      expect(result).to.equal('deleting');
      expect(object?.metadata.deletionTimestamp).to.be.a('string');
      expect(object?.metadata.finalizers).to.include('example.com/hold');
      expect(object?.metadata.finalizers).to.include('foregroundDeletion');
    });

    it('refuses a delete whose uid precondition no longer holds', async () => {
      await client.create(cm('settings'));
      const err = await rejection(client.remove(cm('settings'), { preconditions: { uid: 'someone-else' } }));
      expect(isConflict(err)).to.equal(true);
      expect((await client.get(cm('settings'))).metadata.name).to.equal('settings');
    });
  });

  describe('errors and throttling', () => {
    it('maps 404 and 403 to isNotFound and isForbidden with the Status reason', async () => {
      const missing = await rejection(client.get(cm('missing')));
      expect(isNotFound(missing)).to.equal(true);
      expect((missing as KubeApiError).message).to.equal('get configmaps "default/missing": configmaps "missing" not found (404 NotFound)');
      server.faults.forbid({ verb: 'get', resource: 'configmaps' });
      const forbidden = await rejection(client.get(cm('settings')));
      expect(isForbidden(forbidden)).to.equal(true);
      expect((forbidden as KubeApiError).code).to.equal(403);
    });

    it('waits the Retry-After of a 429 and resends, through the injected scheduler', async () => {
      await client.create(cm('settings', { a: '1' }));
      server.faults.failNext(2, { code: 429, retryAfterSeconds: 2, verb: 'get' });
      const read = await client.get<ConfigMap>(cm('settings'));
      expect(read.data).to.deep.equal({ a: '1' });
      expect(scheduler.delays).to.deep.equal([2000, 2000]);
      expect(server.requestLog.filter((r) => r.verb === 'get').map((r) => r.status)).to.deep.equal([429, 429, 200]);
    });

    it('bounds the Retry-After it honours and how many times it resends', async () => {
      const bounded = kubeClient(server.kubeConfig(), { scheduler, logger: silentLogger, maxThrottleRetries: 2, maxRetryAfterSeconds: 5 });
      await bounded.create(cm('settings'));
      server.faults.failNext(3, { code: 429, retryAfterSeconds: 600, verb: 'get' });
      const err = await rejection(bounded.get(cm('settings')));
      expect(isTooManyRequests(err)).to.equal(true);
      expect((err as KubeApiError).retryAfterSeconds).to.equal(600);
      expect(scheduler.delays).to.deep.equal([5000, 5000]);
    });

    it('does not resend a 500 that names no Retry-After', async () => {
      server.faults.failNext(1, { code: 500, verb: 'get' });
      const err = await rejection(client.get(cm('settings')));
      expect((err as KubeApiError).code).to.equal(500);
      expect(scheduler.delays).to.deep.equal([]);
    });

    it('aborts a request in flight when the signal aborts, with the signal reason', async () => {
      await client.create(cm('settings'));
      server.faults.latency(10_000, { verb: 'get' });
      const controller = new AbortController();
      const pending = rejection(client.get(cm('settings'), { signal: controller.signal }));
      while (!server.requestLog.some((r) => r.verb === 'get')) await new Promise((resolve) => setImmediate(resolve));
      const reason = new Error('reconcile cancelled');
      controller.abort(reason);
      expect(await pending).to.equal(reason);
    });

    it('stops waiting for a Retry-After when the signal aborts', async () => {
      const realTime = kubeClient(server.kubeConfig(), { logger: silentLogger });
      server.faults.failNext(1, { code: 429, retryAfterSeconds: 600, verb: 'get' });
      const controller = new AbortController();
      const pending = rejection(realTime.get(cm('settings'), { signal: controller.signal }));
      while (!server.requestLog.some((r) => r.verb === 'get' && r.status === 429)) await new Promise((resolve) => setImmediate(resolve));
      controller.abort(new Error('stop'));
      expect(String(await pending)).to.equal('Error: stop');
    });

    it('reports a kubeconfig that names no server as a KubeApiError of code 0 that says so, sending nothing', async () => {
      const nowhere = kubeClient(new KubeConfig(), { logger: silentLogger });
      const err = await rejection(nowhere.create(cm('settings')));
      expect(err).to.be.instanceOf(KubeApiError);
      expect((err as KubeApiError).code).to.equal(0);
      expect((err as KubeApiError).message).to.contain('the kubeconfig has no current cluster with a server URL');
    });

    it('reports a server that cannot be reached as code 0 naming the address', async () => {
      const url = server.url;
      await server.close();
      const err = await rejection(client.get(cm('settings')));
      expect(err).to.be.instanceOf(KubeApiError);
      expect((err as KubeApiError).code).to.equal(0);
      expect((err as Error).message).to.include(`no response from ${url}`);
      server = await startApiServer({ logger: silentLogger });
    });
  });

  describe('addressing', () => {
    it('discovers a group version once and reuses it', async () => {
      await client.create(cm('a'));
      await client.create(cm('b'));
      await client.get(cm('a'));
      expect(server.requestLog.filter((r) => r.verb === 'discovery')).to.have.length(1);
    });

    it('says which kinds a group version serves when a kind is unknown, and when the group is unknown', async () => {
      const unknownKind = await rejection(client.get({ apiVersion: 'apps/v1', kind: 'Nope', name: 'x', namespace: 'default' }));
      expect(unknownKind).to.be.instanceOf(UnknownResourceError);
      expect((unknownKind as Error).message).to.equal('apiVersion "apps/v1" has no kind "Nope" (it serves: ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet)');
      const unknownGroup = await rejection(client.get({ apiVersion: 'nope.example.com/v1', kind: 'X', name: 'x' }));
      expect((unknownGroup as Error).message).to.equal('the server does not serve apiVersion "nope.example.com/v1"');
    });

    it('finds a custom resource whose kind was added to a group version after it was first looked up', async () => {
      const crd = (kind: string, plural: string) => ({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: `${plural}.example.com` },
        spec: {
          group: 'example.com',
          names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
          scope: 'Namespaced',
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
              subresources: { status: {} },
            },
          ],
        },
      });
      await client.apply(crd('App', 'apps'));
      expect((await client.resource('example.com/v1', 'App')).resource).to.equal('apps');
      await client.apply(crd('Widget', 'widgets'));
      const widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' }, spec: { size: 1 } };
      const created = await client.create<KubeObject>(widget);
      expect(created.metadata.uid).to.be.a('string');
      const discoveries = server.requestLog.filter((r) => r.verb === 'discovery' && r.path === '/apis/example.com/v1');
      expect(discoveries).to.have.length(2);
    });

    it('refuses a namespaced object without a namespace, and an object without a name', async () => {
      const noNamespace = await rejection(client.get({ apiVersion: 'v1', kind: 'ConfigMap', name: 'x' }));
      expect(noNamespace).to.be.instanceOf(InvalidTargetError);
      expect((noNamespace as Error).message).to.equal('ConfigMap "x" has no namespace, but configmaps are namespaced');
      const noName = await rejection(client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'default' } }));
      expect((noName as Error).message).to.match(/without a name/);
    });
  });
});
