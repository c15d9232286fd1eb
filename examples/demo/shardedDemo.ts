import { setMaxListeners } from 'node:events';
import { kubeClient, runController, silentLogger, type RunningController } from 'rxkube';
import { connectTo, kubeconfigPaths } from '../support/cluster.js';
import type { ParsedOptions } from '../support/cli.js';
import { podAutoscalerOptions } from '../podautoscaler/controller.js';
import { installPodAutoscalerCrd } from '../podautoscaler/crd.js';
import type { PodAutoscaler } from '../podautoscaler/types.js';
import { createDisplay } from './display.js';
import { steps } from './script.js';
import { describeProblem, problems, stateReader } from './state.js';
import type { DemoOutcome } from './demo.js';

/** The replicas' lease timing, scaled down from client-go's 15/10/2 s so that a handoff shows within a few seconds. */
const timing = { leaseDuration: 3_000, renewDeadline: 2_000, retryPeriod: 400 };

interface Replica {
  name: string;
  running: RunningController<PodAutoscaler>;
  /** Keys it reconciled, before and after the stop of the first replica. */
  keys: [Set<string>, Set<string>];
  stopped: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * `npm start -- --replicas n`: the podautoscaler controller as `n` sharded
 * replicas in this process on the embedded API server (or `--kubeconfig`),
 * the scripted workload, and halfway through, the first replica stopped
 * (it drains and gives its Lease up). The summary shows which keys each
 * replica reconciled before and after, the slots and handoffs each counted,
 * and whether every object converged.
 */
export async function runShardedDemo({ options, env, out, replicas: count }: { options: ParsedOptions; env: NodeJS.ProcessEnv; out: NodeJS.WriteStream; replicas: number }): Promise<DemoOutcome> {
  const started = Date.now();
  const stepTimeout = (options['step-timeout'] as number | undefined) ?? 15_000;
  const pace = (options.pace as number | undefined) ?? 900;
  const kubeconfig = options.kubeconfig as string | undefined;
  const cluster = await connectTo(kubeconfig !== undefined ? [kubeconfig] : kubeconfigPaths([], env));
  const display = createDisplay(out);
  const namespace = cluster.embedded ? 'demo' : `rxkube-demo-${Math.random().toString(36).slice(2, 8)}`;
  const client = kubeClient(cluster.kubeConfig, { fieldManager: 'rxkube-demo' });
  const replicas: Replica[] = [];
  const left: string[] = [];
  let phase: 0 | 1 = 0;
  try {
    display.line(`rxkube main job: ${count} sharded replicas of the podautoscaler controller on ${cluster.where}, namespace "${namespace}"`);
    await client.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    await installPodAutoscalerCrd(client);
    for (let i = 0; i < count; i += 1) {
      const name = `replica-${i}`;
      const keys: [Set<string>, Set<string>] = [new Set(), new Set()];
      const running = await runController({
        ...podAutoscalerOptions(cluster.kubeConfig, { namespace, concurrency: 4, logger: silentLogger }),
        sharding: { replicas: count, by: 'uid', identity: name, namespace, ...timing },
        health: { port: 0, host: '127.0.0.1' },
        handleSignals: false,
        onOutcome: (outcome) => keys[phase].add(outcome.key),
      });
      replicas.push({ name, running, keys, stopped: false });
    }
    const read = stateReader(cluster.kubeConfig, namespace);
    // Every request of a burst listens to it.
    const signal = new AbortController().signal;
    setMaxListeners(200, signal);
    const half = Math.floor(steps.length / 2);
    for (const [i, step] of steps.entries()) {
      if (i === half) {
        const victim = replicas[0]!;
        display.line(`stopping ${victim.name} (it owned ${victim.running.controller.shards()?.active.size ?? 0} slots): its keys move to the others`);
        phase = 1;
        victim.running.stop();
        await victim.running.done;
        victim.stopped = true;
      }
      const stepStart = Date.now();
      await step.run(client, namespace, signal);
      let waiting = problems(await read());
      while (waiting.length > 0 && Date.now() - stepStart < stepTimeout) {
        await sleep(50);
        waiting = problems(await read());
      }
      display.line(`[${String(i + 1).padStart(2)}/${steps.length}] ${step.title}: ${waiting.length === 0 ? `converged in ${Date.now() - stepStart} ms` : 'NOT converged'}`);
      if (waiting.length > 0) {
        left.push(...waiting.map(describeProblem));
        break;
      }
      if (i < steps.length - 1) await sleep(pace);
    }
    display.line('');
    display.line('Summary (sharded)');
    for (const replica of replicas) {
      const state = replica.running.controller.shards();
      const moved = [...replica.keys[1]].filter((key) => !replica.keys[0].has(key) && replicas[0]!.keys[0].has(key));
      display.line(
        `  ${replica.name}: ${replica.stopped ? 'stopped halfway' : `${state?.active.size ?? 0} slots at the end`}; ` +
          `keys reconciled before the stop ${replica.keys[0].size}, after ${replica.keys[1].size}` +
          (replica.stopped ? '' : `, of which ${moved.length} came from ${replicas[0]!.name} (${moved.slice(0, 4).join(', ')}${moved.length > 4 ? ', …' : ''})`) +
          `; handoffs ${state?.handoffs.gained ?? 0} gained, ${state?.handoffs.released ?? 0} released`,
      );
    }
    const live = replicas.filter((r) => !r.stopped);
    const slots = live.reduce((sum, r) => sum + (r.running.controller.shards()?.active.size ?? 0), 0);
    display.line(`  slots:      ${slots} of 256 owned by the ${live.length} replicas left`);
    if (slots !== 256) left.push(`only ${slots} of 256 slots are owned`);
    display.line(`  time:       ${((Date.now() - started) / 1000).toFixed(1)} s`);
    display.line(left.length === 0 ? '  result:     CONVERGED: every object reached the state the controller should give it' : `  result:     NOT CONVERGED: ${left.join('; ')}`);
  } catch (err) {
    left.push(`the demo failed: ${err instanceof Error ? err.message : String(err)}`);
    display.line(left.at(-1) as string);
  } finally {
    display.close();
    for (const replica of replicas) replica.running.stop();
    await Promise.all(replicas.map((replica) => replica.running.done.catch(() => undefined)));
    if (cluster.embedded === undefined) await client.remove({ apiVersion: 'v1', kind: 'Namespace', name: namespace }).catch(() => undefined);
    await cluster.close();
  }
  return left.length === 0 ? 'converged' : 'not converged';
}
