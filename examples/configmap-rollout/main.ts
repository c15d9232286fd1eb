/**
 * Runs the configmap-rollout controller until SIGINT or SIGTERM:
 *
 *   npx tsx examples/configmap-rollout/main.ts [--kubeconfig path] [--namespace ns] [--metrics-port 8080] [--log-format json|pretty] [--log-level debug|info|warn|error]
 *
 * Against the cluster given by `--kubeconfig` (or `KUBECONFIG`); with
 * neither, against the embedded API server, with a kubeconfig printed for
 * `kubectl`. Logs go to stderr: JSON lines, or readable ones with
 * `--log-format pretty`.
 */
import { mkdtemp } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { runController } from 'rxkube';
import { connect, flag } from '../support/cluster.js';
import { loggerFromArgs } from '../support/logging.js';
import { exampleRecorder } from '../support/recorder.js';
import { configMapRolloutOptions } from './controller.js';

const argv = process.argv.slice(2);
const cluster = await connect(argv);
const logger = loggerFromArgs(argv, { controller: 'configmap-rollout' });
const recorder = exampleRecorder(cluster.kubeConfig, 'configmap-rollout', hostname(), logger);
try {
  if (cluster.embedded !== undefined) {
    const path = join(await mkdtemp(join(tmpdir(), 'rxkube-')), 'kubeconfig');
    await cluster.embedded.writeKubeconfig(path);
    const sample = new URL('./sample.yaml', import.meta.url).pathname;
    process.stdout.write(
      `embedded API server: ${cluster.embedded.url}\ntry: kubectl --kubeconfig ${path} apply -f ${sample}\n` +
        `     kubectl --kubeconfig ${path} patch configmap settings -p '{"data":{"level":"debug"}}'\n` +
        `     kubectl --kubeconfig ${path} get deployment web -o jsonpath='{.spec.template.metadata.annotations}'\n`,
    );
  }
  const namespace = flag(argv, 'namespace');
  const running = await runController({
    ...configMapRolloutOptions(cluster.kubeConfig, { logger, recorder, ...(namespace !== undefined ? { namespace } : {}) }),
    health: { port: Number(flag(argv, 'metrics-port') ?? 8080) },
  });
  process.stdout.write(`metrics: ${running.health?.url}/metrics\n`);
  await running.done;
} finally {
  await recorder.close();
  await cluster.close();
}
