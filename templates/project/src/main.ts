import { KubeConfig } from '@kubernetes/client-node';
import { installCrd, kubeClient } from 'rxkube';
import { startApiServer } from 'rxkube/apiserver';
import { apis } from './apis.js';

// With KUBECONFIG set: on that cluster, until Ctrl-C. Without: on an embedded API server started here,
// with a sample object of each kind driven to Ready, then until Ctrl-C (kubectl works against it meanwhile).
// A kubeconfig in ~/.kube alone is not used: npm start never touches a cluster you did not name.
const server = process.env.KUBECONFIG ? undefined : await startApiServer();
const kubeConfig = server?.kubeConfig() ?? new KubeConfig();
if (server === undefined) kubeConfig.loadFromDefault();
const client = kubeClient(kubeConfig);
for (const api of apis) await installCrd(client, api.crd); // applies it, and waits until it is Established

// Each controller stops gracefully on SIGINT or SIGTERM (a second one stops it at once).
const running = await Promise.all(apis.map((api) => api.run(kubeConfig)));
if (server !== undefined) {
  for (const api of apis) console.log(`converged: ${await api.converge(client, 'default')}`);
  await server.writeKubeconfig('kubeconfig');
  console.log(`Every controller converged on the embedded API server (${server.url}); it keeps running: try`);
  console.log('  kubectl --kubeconfig kubeconfig get all,configmaps,' + apis.map((api) => api.kind.toLowerCase()).join(','));
  console.log('Ctrl-C stops it.');
}
await Promise.all(running.map((r) => r.done));
await server?.close();
