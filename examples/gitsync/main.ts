/**
 * Runs the gitsync controller until SIGINT or SIGTERM:
 *
 *   npx tsx examples/gitsync/main.ts [--kubeconfig path] [--namespace ns] [--repo path|url [--revision rev] [--path dir]] [--push-port 8081 [--push-secret s]] [--metrics-port 8080] [--log-format json|pretty] [--log-level debug|info|warn|error]
 *
 * It applies the Application CRD, creates an Application `web`, then
 * reconciles. Without `--repo` it makes a sample repository in a temp
 * folder (the files of `sample/`, committed on branch `main`) for `web` to
 * follow, and prints how to commit to it and watch the cluster follow.
 * With `--repo`, `web` follows that repository (`--revision`, default
 * HEAD; `--path`, default the root).
 * With `--push-port`, it takes Git providers' push webhooks on that port
 * (loopback; `--push-secret` is the webhook's secret) and syncs a pushed
 * repository's Applications at once; polling stays the fallback.
 * With neither `--kubeconfig` nor `KUBECONFIG`, against the embedded API
 * server, with a kubeconfig printed for `kubectl`.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeClient, runController } from 'rxkube';
import { connect, flag } from '../support/cluster.js';
import { loggerFromArgs } from '../support/logging.js';
import { exampleRecorder } from '../support/recorder.js';
import { gitSyncOptions } from './controller.js';
import { servePushEndpoint, type PushEndpoint } from './pushes.js';
import { installApplicationCrd } from './crd.js';
import { Application, type ApplicationSpec } from './types.js';
import { initWorkTree } from './workTree.js';

const argv = process.argv.slice(2);
const cluster = await connect(argv);
const logger = loggerFromArgs(argv, { controller: 'gitsync' });
const recorder = exampleRecorder(cluster.kubeConfig, 'gitsync', hostname(), logger);
const namespace = flag(argv, 'namespace');
const temp = await mkdtemp(join(tmpdir(), 'rxkube-gitsync-'));
let endpoint: PushEndpoint | undefined;
try {
  const client = kubeClient(cluster.kubeConfig, { fieldManager: 'gitsync' });
  logger.info({ cluster: cluster.where }, 'installing the Application CRD');
  await installApplicationCrd(client);
  const kubectl = cluster.embedded === undefined ? 'kubectl' : `kubectl --kubeconfig ${join(temp, 'kubeconfig')}`;
  if (cluster.embedded !== undefined) await cluster.embedded.writeKubeconfig(join(temp, 'kubeconfig'));
  const sample = (file: string) => readFile(new URL(`./sample/${file}`, import.meta.url), 'utf8');
  // What `web` follows: the sample repository (branch main, manifests in deploy/), or the one given.
  let source: Pick<ApplicationSpec, 'repoURL' | 'revision' | 'path'>;
  const given = flag(argv, 'repo');
  if (given === undefined) {
    const repo = await initWorkTree(join(temp, 'repo'));
    await repo.commit({ 'deploy/config.yaml': await sample('deploy/config.yaml'), 'deploy/web.yaml': await sample('deploy/web.yaml') }, 'the sample');
    source = { repoURL: repo.dir, revision: 'main', path: 'deploy' };
    process.stdout.write(
      [
        `sample repository: ${repo.dir} (branch main, manifests in deploy/)`,
        `change: cd ${repo.dir} && sed -i s/hello/bonjour/ deploy/config.yaml && git commit -am bonjour`,
        `drift:  ${kubectl} patch configmap web-config -n ${namespace ?? 'default'} --type merge -p '{"data":{"greeting":"by hand"}}'`,
        '',
      ].join('\n'),
    );
  } else {
    source = { repoURL: given, revision: flag(argv, 'revision') ?? 'HEAD', path: flag(argv, 'path') ?? '.' };
  }
  const app = Application.make({ metadata: { name: 'web', namespace: namespace ?? 'default' }, spec: { ...source, pollIntervalSeconds: 5 } });
  await client.apply(app, { force: true });
  process.stdout.write(`watch:  ${kubectl} get applications,configmaps,services,deployments,events -n ${namespace ?? 'default'}\n`);
  const pushPort = flag(argv, 'push-port');
  const pushSecret = flag(argv, 'push-secret');
  if (pushPort !== undefined) {
    endpoint = await servePushEndpoint({ port: Number(pushPort), ...(pushSecret !== undefined ? { secret: pushSecret } : {}) });
    process.stdout.write(`push webhooks: POST ${endpoint.url}${pushSecret === undefined ? ' (no secret: every request is believed)' : ''}\n`);
  }
  const running = await runController({
    ...gitSyncOptions(cluster.kubeConfig, { logger, recorder, cacheDir: join(temp, 'cache'), ...(namespace !== undefined ? { namespace } : {}), ...(endpoint !== undefined ? { pushes: endpoint.pushes } : {}) }),
    health: { port: Number(flag(argv, 'metrics-port') ?? 8080) },
  });
  process.stdout.write(`metrics: ${running.health?.url}/metrics\n`);
  await running.done;
} finally {
  await endpoint?.close();
  await recorder.close();
  await cluster.close();
  await rm(temp, { recursive: true, force: true });
}
