/**
 * The podautoscaler as two replicas under leader election.
 *
 *   npx tsx examples/leader-elected/main.ts [--kubeconfig path]
 *     Both replicas in this process: shows that only the leader reconciles,
 *     stops it, and shows the other take over; exits 0 when the failover
 *     worked. With no cluster asked for, on the embedded API server; on a
 *     cluster, in a namespace of its own that it deletes at the end.
 *
 *   npx tsx examples/leader-elected/main.ts --kubeconfig path --identity one [--namespace ns]
 *     One replica, until SIGINT/SIGTERM: start two of these in two terminals,
 *     stop the leader, and watch the other take over.
 */
import { findCondition, kubeClient, runController, silentLogger, type KubeClient } from 'rxkube';
import { installPodAutoscalerCrd } from '../podautoscaler/crd.js';
import { autoscalerManifest, autoscalerRef, deploymentManifest } from '../podautoscaler/manifests.js';
import { connect, flag, type Cluster } from '../support/cluster.js';
import { loggerFromArgs } from '../support/logging.js';
import { exampleRecorder } from '../support/recorder.js';
import { replicaOptions, podAutoscalerReplica } from './replica.js';

const argv = process.argv.slice(2);
const identity = flag(argv, 'identity');
const cluster = await connect(argv);
const client = kubeClient(cluster.kubeConfig, { fieldManager: 'leader-elected-demo' });
try {
  await installPodAutoscalerCrd(client);
  if (identity !== undefined) await runOne(identity, flag(argv, 'namespace'));
  else process.exitCode = (await failover(cluster, client)) ? 0 : 1;
} finally {
  await cluster.close();
}

async function runOne(identity: string, namespace: string | undefined): Promise<void> {
  const logger = loggerFromArgs(argv, { controller: 'podautoscaler', identity });
  const recorder = exampleRecorder(cluster.kubeConfig, 'podautoscaler', identity, logger);
  const running = await runController({
    ...replicaOptions(cluster.kubeConfig, {
      identity,
      logger,
      recorder,
      ...(namespace !== undefined ? { namespace, lease: `${namespace}/podautoscaler-leader` } : {}),
      onReconcile: ({ key, phase }) => phase === 'end' && logger.info({ key }, 'reconciled'),
    }),
    health: { port: Number(flag(argv, 'metrics-port') ?? 0) },
  });
  logger.info({ health: running.health?.url }, 'replica running; only the leader reconciles');
  await running.done;
  await recorder.close();
}

async function failover(cluster: Cluster, client: KubeClient): Promise<boolean> {
  const started = Date.now();
  const say = (text: string) => process.stdout.write(`[${((Date.now() - started) / 1000).toFixed(1).padStart(4)} s] ${text}\n`);
  const namespace = cluster.embedded ? 'default' : `rxkube-leader-demo-${Math.random().toString(36).slice(2, 8)}`;
  const lastReconciler = new Map<string, string>();
  const replicas = ['one', 'two'].map((id) => {
    const recorder = exampleRecorder(cluster.kubeConfig, 'podautoscaler', id);
    const controller = podAutoscalerReplica(cluster.kubeConfig, {
      identity: id,
      recorder,
      namespace,
      lease: `${namespace}/podautoscaler-leader`,
      logger: silentLogger,
      onReconcile: ({ identity: who, key, phase }) => phase === 'end' && lastReconciler.set(key, who),
    });
    return { id, controller, recorder, subscription: controller.subscribe() };
  });
  const wait = async (condition: () => boolean | Promise<boolean>, what: string) => {
    const deadline = Date.now() + 30_000;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };
  const leader = () => replicas.find((r) => r.controller.leading());
  const scaledTo = async (replicas: number) => {
    const pa = await client.get(autoscalerRef(namespace, 'web'));
    return (
      pa.status?.currentReplicas === replicas &&
      pa.status.observedGeneration === pa.metadata.generation &&
      findCondition(pa.status.conditions, 'Ready')?.reason === 'Scaled'
    );
  };

  try {
    say(`two podautoscaler replicas, one and two, on ${cluster.where}`);
    if (!cluster.embedded) await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    await client.create(deploymentManifest(namespace, 'web', 1));
    await client.create(autoscalerManifest(namespace, 'web', 'web', 3));
    await wait(() => leader() !== undefined, 'a leader');
    const first = leader()!;
    const standby = replicas.find((r) => r !== first)!;
    say(`${first.id} leads, ${standby.id} stands by`);
    await wait(() => scaledTo(3), 'the first scaling');
    say(`Deployment web scaled to 3 by ${lastReconciler.get(`${namespace}/web`)}`);
    say(`stopping ${first.id}: it finishes its work and releases the Lease`);
    first.subscription.unsubscribe();
    await wait(() => standby.controller.leading(), 'the takeover');
    say(`${standby.id} leads now`);
    await client.patchMerge(autoscalerRef(namespace, 'web'), { spec: { replicas: 5 } });
    await wait(() => scaledTo(5), 'the scaling by the new leader');
    const by = lastReconciler.get(`${namespace}/web`);
    say(`edit: web wants 5; Deployment web scaled to 5 by ${by}`);
    const ok = by === standby.id;
    say(ok ? 'failover OK: only the leader reconciled, and the standby took over' : `failover FAILED: the last reconcile was by ${by}`);
    return ok;
  } catch (err) {
    say(`failover FAILED: ${err instanceof Error ? err.message : String(err)}`);
    return false;
  } finally {
    if (!cluster.embedded) {
      await client.remove(autoscalerRef(namespace, 'web')).catch(() => undefined);
      await wait(async () => (await client.get(autoscalerRef(namespace, 'web')).then(() => false, () => true)), 'the autoscaler to go').catch(() => undefined);
    }
    for (const r of replicas) r.subscription.unsubscribe();
    await Promise.all(replicas.map((r) => r.recorder.close()));
    if (!cluster.embedded) await client.remove({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).catch(() => undefined);
  }
}
