import { expect } from 'chai';
import { setControllerReference, type KubeObject } from 'rxkube';
import { AlreadyOwnedError, getControllerOf, hasControllerReference, isControlledBy, OwnerReferenceError, setOwnerReference } from '../../src/sinks/objects/ownerReferences.js';

function object(apiVersion: string, kind: string, name: string, namespace?: string, uid = `uid-${name}`): KubeObject {
  return { apiVersion, kind, metadata: { name, uid, ...(namespace ? { namespace } : {}) } };
}

const app = object('example.com/v1', 'App', 'web', 'prod');
const deployment = object('apps/v1', 'Deployment', 'web', 'prod');

describe('owner references', () => {
  it('makes the owner the controller with blockOwnerDeletion, without changing the object given', () => {
    const owned = setControllerReference(app, deployment);
    expect(owned.metadata.ownerReferences).to.deep.equal([
      { apiVersion: 'example.com/v1', kind: 'App', name: 'web', uid: 'uid-web', controller: true, blockOwnerDeletion: true },
    ]);
    expect(deployment.metadata.ownerReferences).to.equal(undefined);
    expect(getControllerOf(owned)?.kind).to.equal('App');
    expect(hasControllerReference(owned)).to.equal(true);
    expect(hasControllerReference(deployment)).to.equal(false);
    expect(isControlledBy(owned, app)).to.equal(true);
  });

  it('lets blockOwnerDeletion be turned off', () => {
    const owned = setControllerReference(app, deployment, { blockOwnerDeletion: false });
    expect(owned.metadata.ownerReferences?.[0]?.blockOwnerDeletion).to.equal(false);
  });

  it('updates the reference in place when set again for the same owner, even through another version', () => {
    const once = setControllerReference(app, deployment);
    const v2 = { ...app, apiVersion: 'example.com/v2', metadata: { ...app.metadata, uid: 'uid-web-2' } };
    const twice = setControllerReference(v2, once);
    expect(twice.metadata.ownerReferences).to.have.length(1);
    expect(twice.metadata.ownerReferences?.[0]).to.include({ apiVersion: 'example.com/v2', uid: 'uid-web-2' });
  });

  it('keeps other, non-controller owners', () => {
    const other = object('v1', 'ConfigMap', 'settings', 'prod');
    const withOwner = setOwnerReference(other, deployment);
    expect(withOwner.metadata.ownerReferences?.[0]).to.deep.equal({ apiVersion: 'v1', kind: 'ConfigMap', name: 'settings', uid: 'uid-settings' });
    const owned = setControllerReference(app, withOwner);
    expect(owned.metadata.ownerReferences?.map((r) => r.kind)).to.deep.equal(['ConfigMap', 'App']);
  });

  it('refuses a second controller with AlreadyOwnedError naming the existing one', () => {
    const owned = setControllerReference(app, deployment);
    const rival = object('example.com/v1', 'Other', 'rival', 'prod');
    let caught: unknown;
    try {
      setControllerReference(rival, owned);
    } catch (err) {
      caught = err;
    }
    expect(caught).to.be.instanceOf(AlreadyOwnedError);
    expect((caught as AlreadyOwnedError).existing.name).to.equal('web');
    expect((caught as Error).message).to.equal(
      'Deployment "prod/web" is already controlled by App "web" (apiVersion example.com/v1, uid uid-web)',
    );
    expect(isControlledBy(owned, rival)).to.equal(false);
  });

  it('refuses a namespaced owner in another namespace', () => {
    const elsewhere = object('apps/v1', 'Deployment', 'web', 'dev');
    expect(() => setControllerReference(app, elsewhere)).to.throw(
      OwnerReferenceError,
      'Deployment "dev/web" cannot be owned by App "prod/web": cross-namespace owner references are not allowed',
    );
  });

  it('refuses a namespaced owner for a cluster-scoped object', () => {
    const clusterRole = object('rbac.authorization.k8s.io/v1', 'ClusterRole', 'web');
    expect(() => setControllerReference(app, clusterRole)).to.throw(
      OwnerReferenceError,
      'cluster-scoped ClusterRole "web" cannot have namespaced owner App "prod/web"',
    );
  });

  it('lets a cluster-scoped owner own namespaced and cluster-scoped objects', () => {
    const ns = object('v1', 'Namespace', 'prod');
    expect(setControllerReference(ns, deployment).metadata.ownerReferences).to.have.length(1);
    expect(setControllerReference(ns, object('v1', 'PersistentVolume', 'pv1')).metadata.ownerReferences).to.have.length(1);
  });

  it('refuses an owner without uid or kind, naming what is missing', () => {
    const noUid: KubeObject = { apiVersion: 'example.com/v1', kind: 'App', metadata: { name: 'web', namespace: 'prod' } };
    expect(() => setControllerReference(noUid, deployment)).to.throw(OwnerReferenceError, /has no metadata.uid/);
    const noKind: KubeObject = { metadata: { name: 'web', namespace: 'prod', uid: 'u' } };
    expect(() => setControllerReference(noKind, deployment)).to.throw(OwnerReferenceError, /has no apiVersion, kind/);
  });
});
