import { expect } from 'chai';
import { firstValueFrom, of } from 'rxjs';
import {
  InvalidObjectError,
  objectKey,
  reconcileByKey,
  silentLogger,
  splitKey,
  type ControllerReconciler,
  type KubeClient,
  type KubeObject,
  type ObjectRef,
  type Reconciler,
} from 'rxkube';
import { configMaps, deployments, type ConfigMap, type Deployment } from 'rxkube/kinds';
import { memoryClient } from 'rxkube/testing';

describe('objectKey', () => {
  it('keys a namespaced object as namespace/name', () => {
    expect(objectKey({ metadata: { name: 'web', namespace: 'prod' } })).to.equal('prod/web');
  });

  it('keys a cluster-scoped object by its name alone', () => {
    expect(objectKey({ metadata: { name: 'node-1' } })).to.equal('node-1');
    expect(objectKey({ metadata: { name: 'node-1', namespace: '' } })).to.equal('node-1');
  });

  it('rejects an object without metadata.name, naming what is missing', () => {
    expect(() => objectKey({ kind: 'Pod', metadata: { namespace: 'prod' } })).to.throw(
      InvalidObjectError,
      'cannot key Pod object in namespace "prod": metadata.name is missing',
    );
    expect(() => objectKey({ metadata: { name: '' } })).to.throw(InvalidObjectError, 'metadata.name is empty');
  });

  it('rejects an object without metadata, and values that are not objects', () => {
    expect(() => objectKey({ kind: 'Pod' } as unknown as KubeObject)).to.throw(InvalidObjectError, 'metadata is missing');
    expect(() => objectKey(null as unknown as KubeObject)).to.throw(InvalidObjectError, 'cannot key null');
    expect(() => objectKey('pod' as unknown as KubeObject)).to.throw(InvalidObjectError, 'cannot key a string');
  });

  it('rejects a name or namespace containing "/", which would give two objects one key', () => {
    expect(() => objectKey({ metadata: { name: 'a/b' } })).to.throw(InvalidObjectError, 'metadata.name contains "/"');
    expect(() => objectKey({ metadata: { name: 'b', namespace: 'x/a' } })).to.throw(InvalidObjectError, 'metadata.namespace "x/a" contains "/"');
    expect(objectKey({ metadata: { name: 'b', namespace: 'a' } })).to.equal('a/b');
  });

  it('rejects a namespace that is not a string', () => {
    expect(() => objectKey({ metadata: { name: 'a', namespace: 7 as unknown as string } })).to.throw(
      InvalidObjectError,
      'metadata.namespace is a number',
    );
  });
});

describe('splitKey', () => {
  it('splits namespace/name and name', () => {
    expect(splitKey('prod/web')).to.deep.equal({ namespace: 'prod', name: 'web' });
    expect(splitKey('node-1')).to.deep.equal({ namespace: undefined, name: 'node-1' });
  });

  it('round-trips objectKey', () => {
    const obj = { metadata: { name: 'web', namespace: 'prod' } };
    const { namespace, name } = splitKey(objectKey(obj));
    expect({ namespace, name }).to.deep.equal(obj.metadata);
  });

  it('rejects malformed keys with a message that quotes them', () => {
    for (const bad of ['', '/web', 'prod/', 'a/b/c']) {
      expect(() => splitKey(bad), bad).to.throw(InvalidObjectError, 'cannot split key');
    }
  });
});

describe('the reconciler types', () => {
  // Compiled by the project's tsc check (test/project.test.ts): a cast here would hide what this is about.
  it('let an async wrapper of any reconciler type-check, and run what the wrapped one returns', async () => {
    const base: { reconcile: Reconciler } = { reconcile: () => of({ requeue: false }, { requeueAfter: 7 }) };
    const wrapped: Reconciler = async (key, ctx) => base.reconcile(key, ctx);
    const outcome = await firstValueFrom(of('default/web').pipe(reconcileByKey(wrapped, { logger: silentLogger })));
    expect(outcome).to.include({ key: 'default/web', result: 'requeue_after' });
  });

  it('let an async wrapper of a controller reconcile type-check', async () => {
    const base: { reconcile: ControllerReconciler<KubeObject> } = { reconcile: () => of({ requeue: true }) };
    const wrapped: ControllerReconciler<KubeObject> = async (key, ctx) => {
      ctx.logger.debug({ key }, 'wrapped');
      return base.reconcile(key, ctx);
    };
    expect(typeof wrapped).to.equal('function');
  });
});

/** True only when `A` and `B` are the same type: assignability alone would let a `Widget` pass for a `KubeObject`. */
type Same<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;

interface Widget extends KubeObject {
  spec: { size: number };
}

describe("the client's answers", () => {
  // Compiled by the project's tsc check (test/project.test.ts): each `Same` line fails to compile if an answer's type drifts.
  it('take their type from the object, or from the typed reference, without a type argument', async () => {
    const client: KubeClient = memoryClient({ resources: [{ group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget' }] });
    const widget: Widget = await client.create<Widget>({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'a', namespace: 'default' }, spec: { size: 1 } });
    const read = await client.get(widget);
    const readIsWidget: Same<typeof read, Widget> = true;
    const patched = await client.patchMerge(read, { spec: { size: 2 } });
    const patchedIsWidget: Same<typeof patched, Widget> = true;
    const jsonPatched = await client.patchJson(patched, [{ op: 'replace', path: '/spec/size', value: 3 }]);
    const statusPatched = await client.patchStatus(jsonPatched, { status: {} });
    const removed = await client.remove(statusPatched);
    const removedIsWidget: Same<typeof removed.object, Widget | undefined> = true;
    expect([readIsWidget, patchedIsWidget, removedIsWidget]).to.deep.equal([true, true, true]);
    expect(jsonPatched.spec.size).to.equal(3);
    expect(removed.result).to.equal('deleted');

    await client.create<ConfigMap>({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'web', namespace: 'default' }, data: { a: '1' } });
    const cm = await client.get({ ...configMaps, namespace: 'default', name: 'web' });
    const cmIsConfigMap: Same<typeof cm, ConfigMap> = true;
    const cms = await client.list({ ...configMaps, namespace: 'default' });
    const cmsAreConfigMaps: Same<typeof cms, ConfigMap[]> = true;
    const ref: ObjectRef = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: 'web' };
    const untyped = await client.get(ref);
    const untypedIsKubeObject: Same<typeof untyped, KubeObject> = true;
    const listedUntyped = await client.list({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default' });
    const listedUntypedAreKubeObjects: Same<typeof listedUntyped, KubeObject[]> = true;
    expect([cmIsConfigMap, cmsAreConfigMaps, untypedIsKubeObject, listedUntypedAreKubeObjects]).to.deep.equal([true, true, true, true]);
    expect(cm.data).to.deep.equal({ a: '1' });
    expect([cms.length, untyped.kind, listedUntyped.length]).to.deep.equal([1, 'ConfigMap', 1]);
  });

  it('refuse at compile time an answer read as another type than its target gives, and still take a type argument', () => {
    const check = async (client: KubeClient, widget: Widget, object: KubeObject, ref: ObjectRef): Promise<void> => {
      // @ts-expect-error a Widget read back is no Deployment
      const wrong: Deployment = await client.get(widget);
      // @ts-expect-error a typed reference to a ConfigMap reads no Widget
      const wrongRef: Widget = await client.get({ ...configMaps, namespace: 'default', name: 'web' });
      // @ts-expect-error a Deployment reference named as a ConfigMap
      await client.patchMerge<ConfigMap>({ ...deployments, namespace: 'default', name: 'web' }, {});
      // Naming the type still reads any object or reference as it (another version of a kind, a reference without one).
      const named = await client.get<Widget>(object);
      const namedRef = await client.remove<Widget>(ref);
      void [wrong, wrongRef, named.spec.size, namedRef.object?.spec.size];
    };
    expect(typeof check).to.equal('function');
  });
});
