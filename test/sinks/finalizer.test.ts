import { expect } from 'chai';
import { addFinalizerPatch, finalizerState, removeFinalizerPatch } from '../../src/sinks/objects/finalizer.js';
import type { KubeObject } from 'rxkube';

const name = 'example.com/cleanup';

function object(finalizers?: string[], deleting = false): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: 'a',
      namespace: 'default',
      ...(finalizers ? { finalizers } : {}),
      ...(deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}),
    },
  };
}

describe('finalizer decisions', () => {
  it('adds the finalizer to a live object that lacks it', () => {
    expect(finalizerState(object(), name)).to.equal('add');
    expect(finalizerState(object(['other']), name)).to.equal('add');
  });

  it('applies a live object that has it', () => {
    expect(finalizerState(object(['other', name]), name)).to.equal('apply');
  });

  it('cleans up an object being deleted that still has it', () => {
    expect(finalizerState(object([name], true), name)).to.equal('cleanup');
  });

  it('skips an object being deleted without it', () => {
    expect(finalizerState(object(undefined, true), name)).to.equal('skip');
    expect(finalizerState(object(['other'], true), name)).to.equal('skip');
  });

  it('refuses an empty finalizer name', () => {
    expect(() => finalizerState(object(), '')).to.throw(TypeError, /non-empty name/);
  });

  it('guards the add with a test of the list as read: null when there is none, the list otherwise', () => {
    expect(addFinalizerPatch(object(), name)).to.deep.equal([
      { op: 'test', path: '/metadata/finalizers', value: null },
      { op: 'add', path: '/metadata/finalizers', value: [name] },
    ]);
    expect(addFinalizerPatch(object(['other']), name)).to.deep.equal([
      { op: 'test', path: '/metadata/finalizers', value: ['other'] },
      { op: 'add', path: '/metadata/finalizers/-', value: name },
    ]);
  });

  it('removes by index, guarded by a test that the index still holds our name', () => {
    expect(removeFinalizerPatch(object(['other', name, 'third']), name)).to.deep.equal([
      { op: 'test', path: '/metadata/finalizers/1', value: name },
      { op: 'remove', path: '/metadata/finalizers/1' },
    ]);
    expect(() => removeFinalizerPatch(object(['other']), name)).to.throw(/not on the object/);
  });
});
