import { expect } from 'chai';
import { firstValueFrom, of } from 'rxjs';
import {
  InvalidObjectError,
  objectKey,
  reconcileByKey,
  silentLogger,
  splitKey,
  type ControllerReconciler,
  type KubeObject,
  type Reconciler,
} from 'rxkube';

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
