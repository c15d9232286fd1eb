import { expect } from 'chai';
import type { ApiServer } from 'rxkube/testing';
import { json, raw, start } from './apiserver.helpers.js';

/**
 * Server-side printing of built-in kinds: the Table `kubectl get` asks for has kube's columns
 * (names, priorities) and cells made as kube's printers make them.
 */

const tableAccept = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

interface Table {
  columnDefinitions: { name: string; priority: number }[];
  rows: { cells: unknown[] }[];
}

describe('embedded API server: kube\'s columns for built-in kinds', function () {
  this.timeout(20_000);
  let server: ApiServer;
  before(async () => {
    server = await start();
  });
  after(() => server.close());

  async function table(collection: string, body: Record<string, unknown>): Promise<{ columns: string[]; wide: string[]; cells: Record<string, unknown> }> {
    const created = await json(server, 'POST', collection, body);
    expect(created.status, created.text).to.equal(201);
    const name = (body.metadata as { name: string }).name;
    const res = await raw(server, 'GET', `${collection}/${name}`, { headers: { Accept: tableAccept } });
    const t = res.json() as unknown as Table;
    const cells: Record<string, unknown> = {};
    t.columnDefinitions.forEach((c, i) => (cells[c.name] = t.rows[0].cells[i]));
    return {
      columns: t.columnDefinitions.filter((c) => c.priority === 0).map((c) => c.name),
      wide: t.columnDefinitions.filter((c) => c.priority === 1).map((c) => c.name),
      cells,
    };
  }

  it('services: type, cluster and external IPs, ports with node ports, selector', async () => {
    const t = await table('/api/v1/namespaces/default/services', {
      metadata: { name: 'web' },
      spec: { type: 'NodePort', clusterIP: '10.0.0.10', selector: { app: 'web' }, ports: [{ port: 80, nodePort: 30080, protocol: 'TCP' }, { port: 53, nodePort: 30053, protocol: 'UDP' }] },
    });
    expect(t.columns).to.deep.equal(['Name', 'Type', 'Cluster-IP', 'External-IP', 'Port(s)', 'Age']);
    expect(t.wide).to.deep.equal(['Selector']);
    expect(t.cells).to.deep.include({ Type: 'NodePort', 'Cluster-IP': '10.0.0.10', 'External-IP': '<none>', 'Port(s)': '80:30080/TCP,53:30053/UDP', Selector: 'app=web' });
  });

  it('nodes: readiness, roles, kubelet version and addresses', async () => {
    const t = await table('/api/v1/nodes', {
      metadata: { name: 'n1', labels: { 'node-role.kubernetes.io/control-plane': '' } },
      spec: { unschedulable: true },
    });
    expect(t.columns).to.deep.equal(['Name', 'Status', 'Roles', 'Age', 'Version']);
    expect(t.wide).to.deep.equal(['Internal-IP', 'External-IP', 'OS-Image', 'Kernel-Version', 'Container-Runtime']);
    // A node without a Ready condition is Unknown; cordoned, it is also SchedulingDisabled.
    expect(t.cells).to.deep.include({ Status: 'Unknown,SchedulingDisabled', Roles: 'control-plane', 'Internal-IP': '<none>', 'OS-Image': '<unknown>' });
  });

  it('persistent volumes and claims: capacity, access modes, reclaim policy, claim, class', async () => {
    const pv = await table('/api/v1/persistentvolumes', {
      metadata: { name: 'pv1' },
      spec: {
        capacity: { storage: '5Gi' },
        accessModes: ['ReadWriteOnce', 'ReadOnlyMany'],
        persistentVolumeReclaimPolicy: 'Retain',
        storageClassName: 'fast',
        claimRef: { namespace: 'default', name: 'data' },
        hostPath: { path: '/d' },
      },
    });
    expect(pv.columns).to.deep.equal(['Name', 'Capacity', 'Access Modes', 'Reclaim Policy', 'Status', 'Claim', 'StorageClass', 'VolumeAttributesClass', 'Reason', 'Age']);
    expect(pv.cells).to.deep.include({ Capacity: '5Gi', 'Access Modes': 'RWO,ROX', 'Reclaim Policy': 'Retain', Claim: 'default/data', StorageClass: 'fast', VolumeAttributesClass: '<none>' });
    const pvc = await table('/api/v1/namespaces/default/persistentvolumeclaims', {
      metadata: { name: 'data' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '5Gi' } } },
    });
    expect(pvc.columns).to.deep.equal(['Name', 'Status', 'Volume', 'Capacity', 'Access Modes', 'StorageClass', 'VolumeAttributesClass', 'Age']);
    expect(pvc.cells).to.deep.include({ StorageClass: '<none>', VolumeMode: 'Filesystem' });
  });

  it('workloads: statefulsets, daemonsets, replicasets with their counts, containers and selectors', async () => {
    const template = { metadata: { labels: { app: 'w' } }, spec: { containers: [{ name: 'a', image: 'img:1' }, { name: 'b', image: 'img:2' }] } };
    const sts = await table('/apis/apps/v1/namespaces/default/statefulsets', { metadata: { name: 'db' }, spec: { replicas: 3, serviceName: 'db', selector: { matchLabels: { app: 'w' } }, template } });
    expect(sts.columns).to.deep.equal(['Name', 'Ready', 'Age']);
    expect(sts.cells).to.deep.include({ Ready: '0/3', Containers: 'a,b', Images: 'img:1,img:2' });
    const ds = await table('/apis/apps/v1/namespaces/default/daemonsets', {
      metadata: { name: 'agent' },
      spec: { selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['w', 'v'] }] }, template: { ...template, spec: { ...template.spec, nodeSelector: { disk: 'ssd' } } } },
    });
    expect(ds.columns).to.deep.equal(['Name', 'Desired', 'Current', 'Ready', 'Up-to-date', 'Available', 'Node Selector', 'Age']);
    expect(ds.cells).to.deep.include({ Desired: 0, 'Node Selector': 'disk=ssd', Selector: 'app in (v,w)' });
    const rs = await table('/apis/apps/v1/namespaces/default/replicasets', { metadata: { name: 'rs' }, spec: { replicas: 2, selector: { matchLabels: { app: 'w' } }, template } });
    expect(rs.columns).to.deep.equal(['Name', 'Desired', 'Current', 'Ready', 'Age']);
    expect(rs.cells).to.deep.include({ Desired: 2, Current: 0, Selector: 'app=w' });
  });

  it('jobs: status from conditions, completions, and duration from start to completion', async () => {
    await json(server, 'POST', '/apis/batch/v1/namespaces/default/jobs', {
      metadata: { name: 'done' },
      spec: { completions: 3, template: { spec: { restartPolicy: 'Never', containers: [{ name: 'a', image: 'busybox' }] } } },
    });
    const status = {
      status: {
        succeeded: 3,
        startTime: '2026-01-01T00:00:00Z',
        completionTime: '2026-01-01T00:02:05Z',
        conditions: [{ type: 'Complete', status: 'True' }],
      },
    };
    const patched = await json(server, 'PATCH', '/apis/batch/v1/namespaces/default/jobs/done/status', status, 'application/merge-patch+json');
    expect(patched.status, patched.text).to.equal(200);
    const t = (await raw(server, 'GET', '/apis/batch/v1/namespaces/default/jobs/done', { headers: { Accept: tableAccept } })).json() as unknown as Table;
    expect(t.rows[0].cells.slice(0, 4)).to.deep.equal(['done', 'Complete', '3/3', '2m5s']);
  });

  it('endpoints, endpoint slices, storage classes, webhooks, PDBs and network policies', async () => {
    const ep = await table('/api/v1/namespaces/default/endpoints', {
      metadata: { name: 'web' },
      subsets: [{ addresses: [{ ip: '10.0.0.1' }, { ip: '10.0.0.2' }], ports: [{ port: 80 }, { port: 443 }] }],
    });
    expect(ep.cells.Endpoints).to.equal('10.0.0.1:80,10.0.0.1:443,10.0.0.2:80 + 1 more...');
    const slice = await table('/apis/discovery.k8s.io/v1/namespaces/default/endpointslices', {
      metadata: { name: 'web-1' },
      addressType: 'IPv4',
      endpoints: [{ addresses: ['10.0.0.1'] }],
      ports: [{ port: 80 }],
    });
    expect(slice.columns).to.deep.equal(['Name', 'AddressType', 'Ports', 'Endpoints', 'Age']);
    expect(slice.cells).to.deep.include({ AddressType: 'IPv4', Ports: '80', Endpoints: '10.0.0.1' });
    const sc = await table('/apis/storage.k8s.io/v1/storageclasses', {
      metadata: { name: 'fast', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      provisioner: 'example.com/disk',
    });
    expect(sc.cells).to.deep.include({ Name: 'fast (default)', Provisioner: 'example.com/disk', ReclaimPolicy: 'Delete', VolumeBindingMode: 'Immediate', AllowVolumeExpansion: 'false' });
    const hooks = await table('/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', {
      metadata: { name: 'v' },
      webhooks: [{ name: 'a.example.com', clientConfig: { url: 'https://a' }, sideEffects: 'None', admissionReviewVersions: ['v1'] }],
    });
    expect(hooks.columns).to.deep.equal(['Name', 'Webhooks', 'Age']);
    expect(hooks.cells.Webhooks).to.equal(1);
    const pdb = await table('/apis/policy/v1/namespaces/default/poddisruptionbudgets', { metadata: { name: 'p' }, spec: { maxUnavailable: '25%', selector: { matchLabels: { app: 'w' } } } });
    expect(pdb.cells).to.deep.include({ 'Min Available': 'N/A', 'Max Unavailable': '25%', 'Allowed Disruptions': 0 });
    const np = await table('/apis/networking.k8s.io/v1/namespaces/default/networkpolicies', { metadata: { name: 'deny' }, spec: { podSelector: {} } });
    expect(np.cells['Pod-Selector']).to.equal('<none>');
  });
});
