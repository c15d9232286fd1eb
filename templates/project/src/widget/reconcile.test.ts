import assert from 'node:assert/strict';
import { it } from 'node:test';
import { findCondition, type KubeObject } from 'rxkube';
import { runReconcile } from 'rxkube/testing';
import { DIRECTORY, FINALIZER, reconcileWidget } from './reconcile.js';
import { deployments, GROUP, services, Widget, widgets } from './resource.js';

const sample = Widget.make({ metadata: { name: 'sample', namespace: 'default' }, spec: { image: 'nginx:1.27', replicas: 2, port: 8080 } });

it('adds its finalizer, applies the Deployment and Service, lists the Widget, and reports it Progressing', async () => {
  // The controller's wiring on an in-memory cluster that knows the CRD, in virtual time (1 frame = 1 ms); every request takes 1 ms.
  const options = { for: widgets, owns: [deployments, services], reconcile: reconcileWidget, client: { resources: [Widget], latency: 1 } };
  const run = await runReconcile(options, ({ seed, expectWrites, expectEvents }) => {
    seed(sample);
    // 1: the finalizer, and the run ends; its watch event runs the key again.
    // 2-6: the Deployment, the Service, the directory (a read at 4, the create at 5), the status.
    // 7-10: the Deployment's and Service's events had asked for one more run, which read a cache
    //       the status had not reached yet, so it wrote the same status again; 11-12: that one's
    //       event runs it once more, and it finds nothing left to do but re-apply (no change).
    expectWrites('-abc-defg-hij', {
      a: { verb: 'patch', resource: `widgets.${GROUP}`, body: [{ op: 'test', path: '/metadata/finalizers', value: null }, { op: 'add', path: '/metadata/finalizers', value: [FINALIZER] }] },
      b: 'apply deployments.apps default/sample',
      c: 'apply services default/sample',
      d: { verb: 'create', resource: 'configmaps', body: { data: { sample: 'http://sample.default.svc' } } },
      e: `patch/status widgets.${GROUP} default/sample`,
      f: 'apply deployments.apps default/sample',
      g: 'apply services default/sample',
      h: `patch/status widgets.${GROUP} default/sample`,
      i: 'apply deployments.apps default/sample',
      j: 'apply services default/sample',
    });
    expectEvents(''); // no Event until it is Available
  });
  const widget = run.client.object({ ...Widget.resource, namespace: 'default', name: 'sample' });
  assert.equal(findCondition(widget?.status?.conditions, 'Ready')?.message, '0 of 2 replicas available');
  const directory = run.client.object<KubeObject & { data?: object }>({ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'default', name: DIRECTORY });
  assert.deepEqual(directory?.data, { sample: 'http://sample.default.svc' });
});
