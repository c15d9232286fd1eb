import { KubeConfig } from '@kubernetes/client-node';
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
  const paths = kubeconfigPaths(argv, env);
  if (paths.length === 0) {
    const server = await startApiServer({ logger: silentLogger });
    return { kubeConfig: server.kubeConfig(), where: `the embedded API server at ${server.url}`, embedded: server, close: () => server.close() };
  }
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(paths[0] as string);
  for (const path of paths.slice(1)) {
    const more = new KubeConfig();
    more.loadFromFile(path);
    kubeConfig.mergeConfig(more, true);
  }
  const server = kubeConfig.getCurrentCluster()?.server;
  if (server === undefined) throw new Error(`the kubeconfig ${paths.join(delimiter)} has no current context with a cluster`);
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
