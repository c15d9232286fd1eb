/**
 * The main job (`npm start`): the podautoscaler controller against the
 * embedded API server, or against the cluster given with `--kubeconfig`
 * (or `KUBECONFIG`), driven by a scripted workload, with live progress,
 * `/metrics`, and a summary saying whether every object converged.
 * `npm start -- --help` lists the options.
 *
 * Exit codes: 0 converged, 1 not converged, 2 a bad command line or
 * kubeconfig, 130 interrupted (Ctrl-C; a second one exits at once), 143
 * on SIGTERM. This
 * file is the program's entry: the only place that exits the process.
 */
import { exportTracesFromEnv } from 'rxkube';
import { demoOptionSpecs, demoUsage, runDemo } from './demo/demo.js';
import { runShardedDemo } from './demo/shardedDemo.js';
import { parseCommandLine, UsageError, type CommandLine } from './support/cli.js';
import { KubeconfigError } from './support/cluster.js';

const say = (stream: NodeJS.WriteStream, text: string) => stream.write(text.endsWith('\n') ? text : `${text}\n`);

let commandLine: CommandLine;
try {
  commandLine = parseCommandLine(process.argv.slice(2), demoOptionSpecs);
} catch (err) {
  if (!(err instanceof UsageError)) throw err;
  say(process.stderr, `npm start: ${err.message}\n(npm start -- --help lists the options)`);
  process.exit(2);
}
if (commandLine.help) {
  say(process.stdout, demoUsage);
  process.exit(0);
}

// What a signal makes the job say and exit with: the shell's 128 + the signal's number.
const signalExits = { SIGINT: { code: 130, says: 'interrupted' }, SIGTERM: { code: 143, says: 'terminated' } } as const;
const interrupt = new AbortController();
let stoppedBy: keyof typeof signalExits = 'SIGINT';
const onInterrupt = (signal: keyof typeof signalExits) => {
  // The first signal stops the job, which cleans up what it made; a second one does not wait for that.
  if (interrupt.signal.aborted) {
    say(process.stderr, signalExits[signal].says);
    process.exit(signalExits[signal].code);
  }
  stoppedBy = signal;
  interrupt.abort();
};
process.on('SIGINT', onInterrupt);
process.on('SIGTERM', onInterrupt);

// OpenTelemetry traces of every reconcile, when OTEL_TRACES_EXPORTER or OTEL_EXPORTER_OTLP_ENDPOINT asks (docs/tracing.md):
// started before the controllers, flushed before the job exits.
const traces = await exportTracesFromEnv({ serviceName: 'rxkube-main-job', onError: (err) => say(process.stderr, `npm start: exporting traces failed: ${String(err)}`) });

try {
  const replicas = (commandLine.options.replicas as number | undefined) ?? 1;
  const outcome =
    replicas > 1
      ? await runShardedDemo({ options: commandLine.options, env: process.env, out: process.stdout, replicas })
      : await runDemo({ options: commandLine.options, env: process.env, out: process.stdout, signal: interrupt.signal });
  if (outcome === 'interrupted') say(process.stderr, signalExits[stoppedBy].says);
  process.exitCode = outcome === 'converged' ? 0 : outcome === 'interrupted' ? signalExits[stoppedBy].code : 1;
} catch (err) {
  if (!(err instanceof KubeconfigError)) throw err;
  say(process.stderr, `npm start: ${err.message}`);
  process.exitCode = 2;
} finally {
  process.off('SIGINT', onInterrupt);
  process.off('SIGTERM', onInterrupt);
  await traces?.shutdown();
}
