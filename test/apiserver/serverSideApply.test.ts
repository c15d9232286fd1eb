import { expect } from 'chai';
import fc from 'fast-check';
import type { JsonObject } from '../../src/apiserver/writes/jsonValue.js';
import { PatchError } from '../../src/apiserver/writes/patchError.js';
import { ApplyConflictError, recordManagedFields, serverSideApply, type ServerSideApplyOptions } from '../../src/apiserver/writes/serverSideApply.js';
import { catchError } from './catchError.js';
import { expectOrdinaryPrototypes, expectPrototypesUnchanged, prototypeSnapshot } from '../support/hostileJson.js';

// Expected results follow the Kubernetes "Server-Side Apply" reference page, apimachinery's
// managedfields package and structured-merge-diff (merge/update.go, typed/*).

const T0 = '2024-01-01T00:00:00Z';
const T1 = '2024-01-01T00:01:00Z';
const T2 = '2024-01-01T00:02:00Z';
const deploymentKind = { group: 'apps', kind: 'Deployment' };

function deployment(spec: JsonObject = {}, labels: Record<string, string> = { app: 'web' }): JsonObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', labels },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'app:1', ports: [{ containerPort: 80 }] }] } },
      ...spec,
    },
  };
}

function apply(live: object | undefined, applied: object, manager: string, extra: Partial<ServerSideApplyOptions> = {}): JsonObject {
  return serverSideApply({ live, applied, manager, force: false, kind: deploymentKind, builtin: true, now: T1, ...extra }).object as JsonObject;
}

/** As stored: the server adds a uid to created objects, which marks them as existing. */
function stored(obj: JsonObject): JsonObject {
  const copy = structuredClone(obj);
  (copy.metadata as JsonObject).uid = 'uid-1';
  return copy;
}

const entries = (obj: JsonObject): JsonObject[] => ((obj.metadata as JsonObject).managedFields ?? []) as JsonObject[];
const entry = (obj: JsonObject, manager: string): JsonObject | undefined => entries(obj).find((e) => e.manager === manager);
const spec = (obj: JsonObject): JsonObject => obj.spec as JsonObject;

describe('serverSideApply', () => {
  it('creates the object and records the applied fields in FieldsV1 (docs: managedFields example)', () => {
    const created = apply(undefined, deployment(), 'kubectl', { now: T0 });
    expect(spec(created).replicas).to.equal(2);
    expect(entries(created)).to.deep.equal([
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        time: T0,
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:labels': { 'f:app': {} } },
          'f:spec': {
            'f:replicas': {},
            'f:selector': {},
            'f:template': {
              'f:metadata': { 'f:labels': { 'f:app': {} } },
              'f:spec': {
                'f:containers': {
                  'k:{"name":"app"}': {
                    '.': {},
                    'f:image': {},
                    'f:name': {},
                    'f:ports': { 'k:{"containerPort":80,"protocol":"TCP"}': { '.': {}, 'f:containerPort': {} } },
                  },
                },
              },
            },
          },
        },
      },
    ]);
  });

  it('re-applying the same configuration changes nothing and keeps the time', () => {
    const created = stored(apply(undefined, deployment(), 'kubectl', { now: T0 }));
    const again = apply(created, deployment(), 'kubectl', { now: T2 });
    expect(again).to.deep.equal(created);
  });

  it('refuses to change a field another manager owns, with kube\'s 409 message and causes', () => {
    const created = stored(apply(undefined, deployment(), 'alice'));
    const error = catchError(() => apply(created, deployment({ replicas: 3 }), 'bob'), ApplyConflictError);
    expect([error.code, error.reason]).to.deep.equal([409, 'Conflict']);
    expect(error.message).to.equal('Apply failed with 1 conflict: conflict with "alice": .spec.replicas');
    expect(error.causes).to.deep.equal([{ type: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.replicas' }]);
  });

  it('lists several conflicts grouped by manager, with list items by key', () => {
    const created = stored(apply(undefined, deployment(), 'alice'));
    const changed = deployment({
      replicas: 5,
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'app:2' }] } },
    });
    const error = catchError(() => apply(created, changed, 'bob'), ApplyConflictError);
    expect(error.message).to.equal(
      'Apply failed with 2 conflicts: conflicts with "alice":\n- .spec.replicas\n- .spec.template.spec.containers[name="app"].image',
    );
    expect(error.causes.map((c) => c.field)).to.deep.equal(['.spec.replicas', '.spec.template.spec.containers[name="app"].image']);
  });

  it('with force takes the field over: the other manager loses it', () => {
    const created = stored(apply(undefined, deployment(), 'alice'));
    const forced = apply(created, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 7 } }, 'bob', {
      force: true,
    });
    expect(spec(forced).replicas).to.equal(7);
    expect(entry(forced, 'bob')?.fieldsV1).to.deep.equal({ 'f:spec': { 'f:replicas': {} } });
    expect((entry(forced, 'alice')?.fieldsV1 as JsonObject)['f:spec']).to.not.have.property('f:replicas');
  });

  it('shares ownership when another manager applies the same value (no conflict)', () => {
    const created = stored(apply(undefined, deployment(), 'alice'));
    const shared = apply(created, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { replicas: 2 } }, 'bob');
    expect(entry(shared, 'bob')?.fieldsV1).to.deep.equal({ 'f:spec': { 'f:replicas': {} } });
    expect((entry(shared, 'alice')?.fieldsV1 as JsonObject)['f:spec']).to.have.property('f:replicas');
  });

  it('removes fields the manager stopped applying, unless another manager owns them', () => {
    const created = stored(apply(undefined, deployment({}, { app: 'web', tier: 'front', team: 'a' }), 'alice'));
    const withBob = stored(
      apply(created, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', labels: { team: 'a' } } }, 'bob'),
    );
    const dropped = apply(withBob, deployment({}, { app: 'web' }), 'alice');
    expect((dropped.metadata as JsonObject).labels).to.deep.equal({ app: 'web', team: 'a' });
  });

  it('removes a list item the manager stopped applying and keeps items others own', () => {
    const two = deployment({
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'a' }, { name: 'side', image: 's' }] } },
    });
    const created = stored(apply(undefined, two, 'alice'));
    const one = apply(created, deployment({ template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'a' }] } } }), 'alice');
    const containers = (((spec(one).template as JsonObject).spec as JsonObject).containers as JsonObject[]).map((c) => c.name);
    expect(containers).to.deep.equal(['app']);
  });

  it('leaves no emptied field behind when the manager stops applying everything in it (structured-merge-diff prune)', () => {
    const full = deployment({
      template: {
        metadata: { labels: { app: 'web' }, annotations: { x: 'y' } },
        spec: {
          containers: [{ name: 'app', image: 'a', env: [{ name: 'A', value: '1' }], resources: { limits: { cpu: '1' } }, securityContext: { runAsUser: 1 } }],
          volumes: [{ name: 'v', emptyDir: {} }],
        },
      },
    });
    const created = stored(apply(undefined, full, 'alice'));
    const bare = apply(created, deployment({ template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'a' }] } } }), 'alice');
    const template = spec(bare).template as JsonObject;
    expect(template.metadata).to.deep.equal({ labels: { app: 'web' } });
    expect(template.spec).to.deep.equal({ containers: [{ name: 'app', image: 'a' }] });
    expect(bare.metadata).to.deep.equal({ name: 'web', namespace: 'default', labels: { app: 'web' }, uid: 'uid-1', managedFields: entries(bare) });
  });

  it('keeps an emptied field that another manager owns something in, and the object\'s metadata when no label is left', () => {
    const withEnv = deployment({ template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'a', env: [{ name: 'A', value: '1' }] }] } } });
    const created = stored(apply(undefined, withEnv, 'alice'));
    const bobEnv = { name: 'B', value: '2' };
    const withBob = stored(
      apply(created, { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' }, spec: { template: { spec: { containers: [{ name: 'app', env: [bobEnv] }] } } } }, 'bob'),
    );
    const unlabelled = deployment({ template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'a' }] } } });
    unlabelled.metadata = { name: 'web', namespace: 'default' };
    const withoutA = apply(withBob, unlabelled, 'alice');
    const container = (((spec(withoutA).template as JsonObject).spec as JsonObject).containers as JsonObject[])[0] as JsonObject;
    expect(container.env).to.deep.equal([bobEnv]);
    expect(withoutA.metadata).to.not.have.property('labels');
    expect(withoutA.metadata).to.include({ name: 'web', namespace: 'default' });
  });

  it('merges associative lists by key and keeps live-only items (docs: merge strategy)', () => {
    const created = stored(apply(undefined, deployment(), 'alice'));
    const sidecar = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web' },
      spec: { template: { spec: { containers: [{ name: 'side', image: 's' }] } } },
    };
    const merged = apply(created, sidecar, 'bob');
    const containers = ((spec(merged).template as JsonObject).spec as JsonObject).containers as JsonObject[];
    expect(containers.map((c) => c.name)).to.deep.equal(['app', 'side']);
  });

  it('conflicts with an Update manager, named with its apiVersion (recordManagedFields)', () => {
    const created = stored(apply(undefined, deployment(), 'alice', { now: T0 }));
    const edited = stored(
      recordManagedFields({ before: created, after: { ...created, spec: { ...spec(created), replicas: 4 } }, manager: 'kubectl-edit', operation: 'Update', now: T1 }) as JsonObject,
    );
    expect((entry(edited, 'alice')?.fieldsV1 as JsonObject)['f:spec']).to.not.have.property('f:replicas');
    const error = catchError(() => apply(edited, deployment({ replicas: 9 }), 'alice'), ApplyConflictError);
    expect(error.message).to.equal('Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: .spec.replicas');
  });

  it('gives an untracked existing object a before-first-apply manager that conflicts', () => {
    const legacy = stored(deployment());
    const error = catchError(() => apply(legacy, deployment({ replicas: 3 }), 'alice'), ApplyConflictError);
    expect(error.message).to.equal('Apply failed with 1 conflict: conflict with "before-first-apply" using apps/v1: .spec.replicas');
  });

  it('treats custom resources\' lists as atomic', () => {
    const kind = { group: 'example.com', kind: 'Widget' };
    const widget = (items: string[]): JsonObject => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { items } });
    const created = stored(serverSideApply({ live: undefined, applied: widget(['a', 'b']), manager: 'm', force: false, kind, builtin: false, now: T0 }).object as JsonObject);
    expect(entry(created, 'm')?.fieldsV1).to.deep.equal({ 'f:spec': { 'f:items': {} } });
    const replaced = serverSideApply({ live: created, applied: widget(['c']), manager: 'm', force: false, kind, builtin: false, now: T1 }).object as JsonObject;
    expect(spec(replaced).items).to.deep.equal(['c']);
  });

  it('owns finalizers item by item (a set list: v: elements)', () => {
    const pod = (finalizers: string[]): JsonObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', finalizers } });
    const kind = { group: '', kind: 'Pod' };
    const created = stored(serverSideApply({ live: undefined, applied: pod(['a/x']), manager: 'm1', force: false, kind, builtin: true, now: T0 }).object as JsonObject);
    const both = serverSideApply({ live: created, applied: pod(['b/y']), manager: 'm2', force: false, kind, builtin: true, now: T1 }).object as JsonObject;
    expect((both.metadata as JsonObject).finalizers).to.deep.equal(['a/x', 'b/y']);
    expect(entry(both, 'm2')?.fieldsV1).to.deep.equal({ 'f:metadata': { 'f:finalizers': { 'v:"b/y"': {} } } });
  });

  it('keeps reset fields (status through the main resource) at their live values and unowned', () => {
    const created = stored({ ...apply(undefined, deployment(), 'alice'), status: { replicas: 1 } });
    const out = apply(created, { ...deployment(), status: { replicas: 99 } }, 'alice', { resetFields: ['status'] });
    expect(out.status).to.deep.equal({ replicas: 1 });
    expect(entry(out, 'alice')?.fieldsV1).to.not.have.property('f:status');
  });

  it('removes a field applied as null', () => {
    const created = stored(apply(undefined, deployment(), 'alice'));
    const out = apply(created, { ...deployment(), spec: { ...spec(deployment()), replicas: null } }, 'alice');
    expect(spec(out)).to.not.have.property('replicas');
  });

  it('refuses managedFields in the configuration (400) and list items without their key (422; kube answers 500)', () => {
    const withManaged = { ...deployment(), metadata: { name: 'web', managedFields: [] } };
    expect(catchError(() => apply(undefined, withManaged, 'a'), PatchError)).to.include({ code: 400, message: 'metadata.managedFields must be nil' });
    const keyless = deployment({ template: { spec: { containers: [{ image: 'x' }] } } });
    const error = catchError(() => apply(undefined, keyless, 'a'), PatchError);
    expect(error.code).to.equal(422);
    expect(error.message).to.contain('associative list with keys has an element that omits key field "name"');
  });

  it('applies, keeps and removes a member named __proto__ as data, owned like any other field', () => {
    const before = prototypeSnapshot();
    const cm = (data: string): JsonObject => JSON.parse(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","namespace":"default"},"data":${data}}`) as JsonObject;
    const applyCm = (live: object | undefined, applied: object, manager: string): JsonObject =>
      serverSideApply({ live, applied, manager, force: false, kind: { group: '', kind: 'ConfigMap' }, builtin: true, now: T1 }).object as JsonObject;
    const created = applyCm(undefined, cm('{"__proto__":"p","a":"1"}'), 'one');
    expect(JSON.stringify(created.data)).to.equal('{"__proto__":"p","a":"1"}');
    expectOrdinaryPrototypes(created);
    expect(JSON.stringify((created.metadata as { managedFields: { fieldsV1: unknown }[] }).managedFields[0]?.fieldsV1)).to.equal('{"f:data":{"f:__proto__":{},"f:a":{}}}');
    const other = applyCm(stored(created), cm('{"b":"2"}'), 'two');
    expect(JSON.stringify(other.data)).to.equal('{"__proto__":"p","a":"1","b":"2"}');
    const dropped = applyCm(other, cm('{"a":"1"}'), 'one');
    expect(JSON.stringify(dropped.data)).to.equal('{"a":"1","b":"2"}');
    const conflict = catchError(() => applyCm(other, cm('{"__proto__":"q"}'), 'two'), ApplyConflictError);
    expect(conflict.message).to.include('.data.__proto__');
    expectPrototypesUnchanged(before);
  });

  describe('properties', () => {
    const labels = fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), fc.constantFrom('1', '2'), { maxKeys: 4 });
    const containers = fc.uniqueArray(fc.record({ name: fc.constantFrom('x', 'y', 'z'), image: fc.constantFrom('i1', 'i2') }), {
      selector: (c) => c.name,
      maxLength: 3,
    });
    const config = fc.record({ labels, replicas: fc.option(fc.integer({ min: 0, max: 3 }), { nil: undefined }), containers });
    const toObject = (c: { labels: Record<string, string>; replicas: number | undefined; containers: JsonObject[] }): JsonObject => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'web', labels: c.labels },
      spec: { ...(c.replicas === undefined ? {} : { replicas: c.replicas }), template: { spec: { containers: c.containers } } },
    });

    it('never modifies its inputs; conflicts are the only failure; a forced apply is idempotent', () => {
      fc.assert(
        fc.property(config, config, fc.boolean(), (first, second, force) => {
          const created = stored(apply(undefined, toObject(first), 'one'));
          const createdCopy = structuredClone(created);
          const applied = toObject(second);
          const appliedCopy = structuredClone(applied);
          let out: JsonObject | undefined;
          try {
            out = apply(created, applied, 'two', { force });
          } catch (e) {
            expect(e).to.be.instanceOf(ApplyConflictError);
            expect(force).to.equal(false);
          }
          expect(created).to.deep.equal(createdCopy);
          expect(applied).to.deep.equal(appliedCopy);
          if (out !== undefined) {
            const again = apply(stored(out), applied, 'two', { force, now: T2 });
            expect(again).to.deep.equal(stored(out));
            // What the manager applied is in the object.
            expect((out.metadata as JsonObject).labels).to.include(second.labels);
          }
        }),
        { numRuns: 300 },
      );
    });
  });
});

describe('recordManagedFields', () => {
  const configMap = (data: Record<string, string>): JsonObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { a: '1' } }, data });

  it('gives the creator every field it set, with "." on maps it added (kube Update entries)', () => {
    const created = recordManagedFields({ before: undefined, after: configMap({ k: 'v' }), manager: 'kubectl-create', operation: 'Update', now: T0 }) as JsonObject;
    expect(entries(created)).to.deep.equal([
      {
        manager: 'kubectl-create',
        operation: 'Update',
        apiVersion: 'v1',
        time: T0,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { '.': {}, 'f:k': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } } },
      },
    ]);
  });

  it('marks spec itself as owned for custom resources but not for built-ins', () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { nodeName: 'n' } };
    const cr = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: { size: 1 } };
    const fieldsOf = (obj: object): JsonObject => entries(recordManagedFields({ before: undefined, after: obj, manager: 'm', operation: 'Update', now: T0 }) as JsonObject)[0]?.fieldsV1 as JsonObject;
    expect(fieldsOf(pod)).to.deep.equal({ 'f:spec': { 'f:nodeName': {} } });
    expect(fieldsOf(cr)).to.deep.equal({ 'f:spec': { '.': {}, 'f:size': {} } });
  });

  it('moves changed fields to the writer and drops removed ones from everybody', () => {
    const created = stored(recordManagedFields({ before: undefined, after: configMap({ k: 'v', x: '1' }), manager: 'creator', operation: 'Update', now: T0 }) as JsonObject);
    const next = structuredClone(created);
    next.data = { k: 'changed' };
    const updated = recordManagedFields({ before: created, after: next, manager: 'editor', operation: 'Update', now: T1 }) as JsonObject;
    expect(entry(updated, 'editor')?.fieldsV1).to.deep.equal({ 'f:data': { 'f:k': {} } });
    expect(entry(updated, 'creator')?.fieldsV1).to.deep.equal({ 'f:data': {}, 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } } });
    expect(entries(updated).map((e) => e.manager)).to.deep.equal(['creator', 'editor']);
  });

  it('records the subresource of a status write', () => {
    const pod = stored({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { nodeName: 'n' }, status: {} });
    const tracked = stored(recordManagedFields({ before: undefined, after: pod, manager: 'c', operation: 'Update', now: T0 }) as JsonObject);
    const out = recordManagedFields({ before: tracked, after: { ...tracked, status: { phase: 'Running' } }, manager: 'kubelet', operation: 'Update', subresource: 'status', now: T1 }) as JsonObject;
    expect(entry(out, 'kubelet')).to.include({ subresource: 'status', operation: 'Update' });
  });

  it('does not start tracking an existing object, and an empty list in the request resets tracking', () => {
    const untracked = stored(configMap({ k: 'v' }));
    expect(recordManagedFields({ before: untracked, after: { ...untracked, data: { k: 'w' } }, manager: 'm', operation: 'Update', now: T1 })).to.not.have.nested.property('metadata.managedFields');
    const tracked = stored(recordManagedFields({ before: undefined, after: configMap({ k: 'v' }), manager: 'm', operation: 'Update', now: T0 }) as JsonObject);
    const reset = { ...tracked, metadata: { ...(tracked.metadata as JsonObject), managedFields: [] }, data: { k: 'w' } };
    expect(recordManagedFields({ before: tracked, after: reset, manager: 'm', operation: 'Update', now: T1 })).to.not.have.nested.property('metadata.managedFields');
  });
});
