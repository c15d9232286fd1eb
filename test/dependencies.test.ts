import { expect } from 'chai';

// @kubernetes/client-node 2.x pulls undici 8, which crashes at import on Node 20.
// We pin 1.4.x (see README); this proves the pinned client imports and builds
// its clients on the Node this project supports.
describe('@kubernetes/client-node', () => {
  it('imports on this Node and builds a client from a kubeconfig', async () => {
    const k8s = await import('@kubernetes/client-node');
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'ctx', cluster: 'c', user: 'u' }],
      currentContext: 'ctx',
    });
    const core = kc.makeApiClient(k8s.CoreV1Api);
    expect(core).to.be.instanceOf(k8s.CoreV1Api);
    expect(kc.getCurrentCluster()?.server).to.equal('http://127.0.0.1:1');
  });
});
