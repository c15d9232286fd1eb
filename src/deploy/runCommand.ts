import { exportTracesFromEnv, type TraceExport } from '../observe/tracing/exportFromEnv.js';
import { KubeConfig } from '@kubernetes/client-node';
import { runController } from '../controller/runController.js';
import { runPipeline } from '../controller/runPipeline.js';
import { parseCommandLine, type CliIo } from '../util/cli.js';
import { define, DefinitionError, isPipeline, loadDefinition, type DefinedController } from './definition.js';
import { leaderElectionVariable } from './helmChart.js';

/**
 * `rxkube run <module>`: the image's start command. Runs the controller
 * definition `<module>` exports with `runController()` (health server on
 * its port, graceful shutdown on SIGTERM) until it stops, against the
 * cluster of the default kubeconfig: the pod's ServiceAccount in a
 * cluster, else `KUBECONFIG` or `~/.kube/config`. Its namespace is
 * `POD_NAMESPACE` (the Deployment sets it), else `--namespace`, else
 * `default`. `RXKUBE_LEADER_ELECTION=false` (the Helm chart's
 * `leaderElection.enabled: false`) runs it without the leader election of
 * its definition. Exit codes: 0 once stopped cleanly, 1 when the
 * controller failed, 2 for a bad command line, environment or module.
 */

export const runUsage = `usage: rxkube run <module> [options]

Runs the controller definition <module> exports until SIGTERM or SIGINT, against the pod's
ServiceAccount in a cluster (else KUBECONFIG or ~/.kube/config), in namespace POD_NAMESPACE
(else --namespace, else "default"). RXKUBE_LEADER_ELECTION=false runs it without the leader
election of its definition (a single replica).
Exports OpenTelemetry traces of every run when OTEL_TRACES_EXPORTER or
OTEL_EXPORTER_OTLP_ENDPOINT asks for them (docs/tracing.md).

options:
  --namespace <ns>           the namespace when POD_NAMESPACE is not set
  --health-port <n>          port of /metrics, /healthz, /readyz (default: the definition's, else 8080)
  --webhook-port <n>         port of the webhooks (default: the definition's, else 9443)
  --webhook-cert-dir <dir>   where the webhooks' tls.crt and tls.key are (default: the definition's)
  -h, --help                 show this help
`;

const portPattern = /^\d{1,5}$/;

function parse(args: string[]) {
  try {
    const parsed = parseCommandLine({
      args,
      options: { namespace: { type: 'string' }, 'health-port': { type: 'string' }, 'webhook-port': { type: 'string' }, 'webhook-cert-dir': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
      allowPositionals: true,
      strict: true,
    });
    for (const name of ['health-port', 'webhook-port'] as const) {
      const value = parsed.values[name];
      if (value !== undefined && (!portPattern.test(value) || Number(value) > 65535)) return new Error(`--${name} must be a port number, got ${JSON.stringify(value)}`);
    }
    return parsed;
  } catch (err) {
    return err as Error;
  }
}

/**
 * The definition's options as the environment amends them: without
 * `leaderElection` when `RXKUBE_LEADER_ELECTION` is `false`. Any value
 * but `true` and `false` is refused, naming it.
 */
export function withEnvironment<O extends Pick<DefinedController, 'leaderElection'>>(options: O, env: NodeJS.ProcessEnv): O {
  const election = env[leaderElectionVariable];
  if (election === undefined || election === 'true') return options;
  if (election !== 'false') throw new DefinitionError(`${leaderElectionVariable} must be "true" or "false", got ${JSON.stringify(election)}`);
  const { leaderElection: _off, ...rest } = options;
  return rest as O;
}

/** Runs `rxkube run`; returns the exit code once the controller has stopped. */
export async function runCommand(args: string[], io: CliIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const parsed = parse(args);
  if (parsed instanceof Error) {
    io.err(`rxkube run: ${parsed.message}\n\n${runUsage}`);
    return 2;
  }
  if (parsed.values.help) {
    io.out(runUsage);
    return 0;
  }
  if (parsed.positionals.length !== 1) {
    io.err(`rxkube run: needs exactly one module\n\n${runUsage}`);
    return 2;
  }
  const namespace = env.POD_NAMESPACE ?? parsed.values.namespace ?? 'default';
  let traces: TraceExport | undefined;
  try {
    const definition = await loadDefinition(parsed.positionals[0] as string);
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromDefault();
    const defined = define(definition, kubeConfig, namespace);
    // Before the controller starts, so that it finds the SDK (docs/tracing.md); flushed on the way out.
    traces = await exportTracesFromEnv({ env, serviceName: defined.name, onError: (err) => io.err(`rxkube run: exporting traces failed: ${err instanceof Error ? err.message : String(err)}`) });
    const { values } = parsed;
    if (isPipeline(defined)) {
      const { crds: _crds, for: _for, informers: _informers, permissions: _permissions, ...pipeline } = defined;
      if (values['health-port'] !== undefined && pipeline.health !== false) pipeline.health = { ...pipeline.health, port: Number(values['health-port']) };
      const running = await runPipeline({ ...pipeline, kubeConfig });
      await running.done;
      return 0;
    }
    const { crds: _crds, ...options } = withEnvironment(defined, env);
    if (values['health-port'] !== undefined && options.health !== false) options.health = { ...options.health, port: Number(values['health-port']) };
    if (options.webhooks !== undefined) {
      const certDir = values['webhook-cert-dir'];
      options.webhooks = {
        ...options.webhooks,
        ...(values['webhook-port'] !== undefined ? { port: Number(values['webhook-port']) } : {}),
        ...(certDir !== undefined ? { tls: { certDir } } : {}),
      };
    }
    const running = await runController(options);
    await running.done;
    return 0;
  } catch (error) {
    io.err(`rxkube run: ${error instanceof Error ? error.message : String(error)}`);
    return error instanceof DefinitionError ? 2 : 1;
  } finally {
    await traces?.shutdown();
  }
}
