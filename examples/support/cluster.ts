import { KubeConfig } from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { delimiter } from 'node:path';
import { silentLogger } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';

/** The cluster an example runs against. */
export interface Cluster {
  kubeConfig: KubeConfig;
  /** For people: `the embedded API server at http://…` or `context "x" (https://…) from path`. */
  where: string;
  /** Set when no cluster was asked for and the example started its own. */
  embedded: ApiServer | undefined;
  /** Stops the embedded server, if any; a cluster that was asked for is left alone. */
  close(): Promise<void>;
}

/**
 * The kubeconfig asked for, if any: `--kubeconfig path` (or
 * `--kubeconfig=path`) first, then `KUBECONFIG` (paths joined by the
 * platform's delimiter, merged as kubectl does). Nothing else: never the
 * default `~/.kube/config`, never the in-cluster account.
 */
export function kubeconfigPaths(argv: readonly string[], env: NodeJS.ProcessEnv): string[] {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--kubeconfig') {
      const path = argv[i + 1];
      if (path === undefined || path.startsWith('--')) throw new Error('--kubeconfig needs a path');
      return [path];
    }
    if (arg.startsWith('--kubeconfig=')) {
      const path = arg.slice('--kubeconfig='.length);
      if (path === '') throw new Error('--kubeconfig needs a path');
      return [path];
    }
  }
  return (env.KUBECONFIG ?? '').split(delimiter).filter((p) => p !== '');
}

/**
 * Connects to the cluster asked for on the command line or in `KUBECONFIG`;
 * when none was, starts the embedded API server and uses that, so an
 * example never touches a cluster it was not pointed at.
 */
export async function connect(argv: readonly string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): Promise<Cluster> {
  return connectTo(kubeconfigPaths(argv, env));
}

/** Loads one kubeconfig file, or fails in one line naming it and what is wrong. */
function loadKubeconfig(path: string): KubeConfig {
  if (!existsSync(path)) throw new KubeconfigError(`the kubeconfig ${path} does not exist`);
  const kubeConfig = new KubeConfig();
  try {
    kubeConfig.loadFromFile(path);
  } catch (err) {
    throw new KubeconfigError(`the kubeconfig ${path} cannot be read: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
  return kubeConfig;
}

/** A kubeconfig that is missing or unreadable: the message is the one line to show. */
export class KubeconfigError extends Error {
  override readonly name = 'KubeconfigError';
}

/** Connects to the cluster the kubeconfig files name (merged as kubectl does), or to a new embedded API server when there are none. */
export async function connectTo(paths: readonly string[]): Promise<Cluster> {
  if (paths.length === 0) {
    const server = await startApiServer({ logger: silentLogger });
    return { kubeConfig: server.kubeConfig(), where: `the embedded API server at ${server.url}`, embedded: server, close: () => server.close() };
  }
  const kubeConfig = loadKubeconfig(paths[0] as string);
  for (const path of paths.slice(1)) kubeConfig.mergeConfig(loadKubeconfig(path), true);
  const server = kubeConfig.getCurrentCluster()?.server;
  if (server === undefined) throw new KubeconfigError(`the kubeconfig ${paths.join(delimiter)} has no current context with a cluster`);
  return {
    kubeConfig,
    where: `context "${kubeConfig.getCurrentContext()}" (${server}) from ${paths.join(delimiter)}`,
    embedded: undefined,
    close: async () => {},
  };
}

/** The value of `--name value` or `--name=value`, if given. */
export function flag(argv: readonly string[], name: string): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === `--${name}`) return argv[i + 1];
    if (arg.startsWith(`--${name}=`)) return arg.slice(name.length + 3);
  }
  return undefined;
}
