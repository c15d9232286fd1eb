/**
 * Runs the podautoscaler controller until SIGINT or SIGTERM:
 *
 *   npx tsx examples/podautoscaler/main.ts [--kubeconfig path] [--namespace ns] [--metrics-port 8080] [--log-format json|pretty] [--log-level debug|info|warn|error]
 *
 * Against the cluster given by `--kubeconfig` (or `KUBECONFIG`): it applies
 * the CRD, then reconciles. With neither, it starts the embedded API server
 * and prints a kubeconfig for it, so that `kubectl` can drive the demo.
 * Logs go to stderr: JSON lines, or readable ones with `--log-format pretty`
 * (`--log-level debug` for every reconcile).
 */
import { mkdtemp } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { kubeClient, runController } from 'rxkube';
import { connect, flag } from '../support/cluster.js';
import { loggerFromArgs } from '../support/logging.js';
import { exampleRecorder } from '../support/recorder.js';
import { podAutoscalerOptions } from './controller.js';
import { installPodAutoscalerCrd } from './crd.js';

const argv = process.argv.slice(2);
const cluster = await connect(argv);
const logger = loggerFromArgs(argv, { controller: 'podautoscaler' });
const recorder = exampleRecorder(cluster.kubeConfig, 'podautoscaler', hostname(), logger);
try {
  logger.info({ cluster: cluster.where }, 'installing the PodAutoscaler CRD');
  await installPodAutoscalerCrd(kubeClient(cluster.kubeConfig, { fieldManager: 'podautoscaler' }));
  if (cluster.embedded !== undefined) {
    const path = join(await mkdtemp(join(tmpdir(), 'rxkube-')), 'kubeconfig');
    await cluster.embedded.writeKubeconfig(path);
    const sample = new URL('./sample.yaml', import.meta.url).pathname;
    process.stdout.write(`embedded API server: ${cluster.embedded.url}\ntry: kubectl --kubeconfig ${path} apply -f ${sample}\n     kubectl --kubeconfig ${path} get podautoscalers,deployments,events\n`);
  }
  const namespace = flag(argv, 'namespace');
  const running = await runController({
    ...podAutoscalerOptions(cluster.kubeConfig, { logger, recorder, ...(namespace !== undefined ? { namespace } : {}) }),
    health: { port: Number(flag(argv, 'metrics-port') ?? 8080) },
  });
  process.stdout.write(`metrics: ${running.health?.url}/metrics\n`);
  await running.done;
} finally {
  await recorder.close();
  await cluster.close();
}
