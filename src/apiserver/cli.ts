import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createDefaultLogger } from '../logger.js';
import { parseCommandLine, UsageError, type CliIo } from '../util/cli.js';
import { startApiServer, type ApiServer } from './startApiServer.js';
import { parseServiceCidr } from './defaults/serviceAllocator.js';

/**
 * `rxkube apiserver`: runs the embedded API server until interrupted and
 * writes a kubeconfig for kubectl:
 *
 *   npx rxkube apiserver --port 8080
 *   export KUBECONFIG=/tmp/rxkube-apiserver-XXXXXX/kubeconfig   (the path it prints)
 *   kubectl get namespaces
 *
 * The kubeconfig holds the server's credentials (with --rbac a
 * system:masters token): by default it goes in a directory made for it
 * (mode 0700, a random name another local user cannot create first) and
 * removed when the server stops; the file is 0600 wherever it is written.
 *
 * Exit codes: 0 when stopped by its caller, 1 when the server fails, 2 for a
 * bad command line, 130 on Ctrl-C (SIGINT), 143 on SIGTERM. Nothing here
 * calls `process.exit`: the codes are returned.
 */

export const apiserverUsage = `usage: rxkube apiserver [options]

Runs rxkube's embedded Kubernetes API server (in memory, plain HTTP; HTTPS with --rbac) until
interrupted, and writes a kubeconfig that points kubectl and client-node at it.

options:
  --port <n>                  port to listen on (default 8080; 0 picks a free one)
  --host <addr>               address to listen on (default 127.0.0.1)
  --kubeconfig <path>         where to write the kubeconfig, mode 0600 (default: <tmpdir>/rxkube-apiserver-XXXXXX/
                              kubeconfig, in a new 0700 directory removed when the server stops)
  --token <t>                 require "Authorization: Bearer <t>" (written into the kubeconfig)
  --rbac                      authenticate every request and authorize it by RBAC, over HTTPS with a
                              self-signed certificate (the kubeconfig is a system:masters admin;
                              kubectl create token gives ServiceAccounts theirs)
  --history-window <n>        changes kept for watch resume (default 10000)
  --bookmark-interval-ms <n>  period of watch bookmarks (default 60000)
  --service-cluster-ip-range <cidr>
                              the IPv4 CIDR Services' cluster IPs come from (default 10.0.0.0/24,
                              as kube-apiserver's); node ports come from 30000-32767
  --feature-gates <gates>     as kube-apiserver's, e.g. ShardedListAndWatch=false (the one gate it
                              knows; on by default: lists and watches honour shardSelector)
  -h, --help                  show this help
`;

/** What a command says and returns when a signal stopped it: the shell's 128 + the signal's number. */
const signalExits: Partial<Record<NodeJS.Signals, { code: number; says: string }>> = {
  SIGINT: { code: 130, says: 'interrupted' },
  SIGTERM: { code: 143, says: 'terminated' },
};

function integer(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || !Number.isSafeInteger(Number(text))) throw new UsageError(`--${name} must be a non-negative integer, got ${JSON.stringify(text)}`);
  return Number(text);
}

/** The gates this server knows, as kube-apiserver's `--feature-gates` names them. */
const knownGates = ['ShardedListAndWatch'] as const;

/** `--feature-gates Gate=true,Other=false`, as kube-apiserver reads it; an unknown gate or value is a usage error. */
function featureGates(text: string | undefined): Partial<Record<(typeof knownGates)[number], boolean>> {
  const gates: Partial<Record<(typeof knownGates)[number], boolean>> = {};
  if (text === undefined) return gates;
  for (const pair of text.split(',').filter((p) => p.trim() !== '')) {
    const [name = '', value, ...rest] = pair.trim().split('=');
    if (!(knownGates as readonly string[]).includes(name)) throw new UsageError(`--feature-gates: unknown feature gate "${name}" (known: ${knownGates.join(', ')})`);
    if (rest.length > 0 || (value !== 'true' && value !== 'false')) throw new UsageError(`--feature-gates: ${name} must be =true or =false, got ${JSON.stringify(pair.trim())}`);
    gates[name as (typeof knownGates)[number]] = value === 'true';
  }
  return gates;
}

function parse(args: string[]) {
  return parseCommandLine({
    args,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      kubeconfig: { type: 'string' },
      token: { type: 'string' },
      rbac: { type: 'boolean' },
      'history-window': { type: 'string' },
      'bookmark-interval-ms': { type: 'string' },
      'feature-gates': { type: 'string' },
      'service-cluster-ip-range': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  }).values;
}

/** Runs `rxkube apiserver` with its arguments until `io.untilStopped()`; returns the exit code. */
export async function apiserverCommand(args: string[], io: CliIo): Promise<number> {
  const values = parse(args);
  if (values.help) {
    io.out(apiserverUsage);
    return 0;
  }
  const port = integer('port', values.port, 8080);
  const historyWindow = integer('history-window', values['history-window'], 10_000);
  const bookmarkIntervalMs = integer('bookmark-interval-ms', values['bookmark-interval-ms'], 60_000);
  const gates = featureGates(values['feature-gates']);
  const serviceCidr = values['service-cluster-ip-range'];
  if (serviceCidr !== undefined) {
    try {
      parseServiceCidr(serviceCidr);
    } catch (err) {
      throw new UsageError(`--service-cluster-ip-range: ${(err as Error).message}`);
    }
  }
  const server: ApiServer = await startApiServer({
    port,
    host: values.host,
    token: values.token,
    rbac: values.rbac ?? false,
    historyWindow,
    bookmarkIntervalMs,
    shardedListAndWatch: gates.ShardedListAndWatch ?? true,
    ...(serviceCidr === undefined ? {} : { serviceCidr }),
    logger: createDefaultLogger({ component: 'apiserver' }),
  });
  // A directory of our own, made now: a predictable path in the shared temp folder could be another user's first.
  let ownDir: string | undefined;
  try {
    if (values.kubeconfig === undefined) ownDir = await mkdtemp(join(tmpdir(), 'rxkube-apiserver-'));
  } catch (err) {
    await server.close();
    throw err;
  }
  const path = resolve(values.kubeconfig ?? join(ownDir as string, 'kubeconfig'));
  try {
    await server.writeKubeconfig(path).catch((err: unknown) => {
      throw new Error(`cannot write the kubeconfig to ${path}: ${err instanceof Error ? err.message : String(err)}`);
    });
    // Listening for Ctrl-C before saying it may be pressed: a signal that came between the two would kill the process unhandled.
    const stopped = io.untilStopped();
    io.out(`rxkube API server listening on ${server.url}`);
    io.out(`kubeconfig written to ${path}`);
    io.out(`  export KUBECONFIG=${path}`);
    if (values.rbac) io.out('RBAC is on: the kubeconfig is a system:masters admin');
    io.out('press Ctrl-C to stop');
    const signal = await stopped;
    const exit = signal ? signalExits[signal] : undefined;
    if (exit === undefined) return 0;
    io.err(exit.says);
    return exit.code;
  } finally {
    await server.close();
    if (ownDir !== undefined) await rm(ownDir, { recursive: true, force: true });
  }
}
