import { createServer, type Server } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';
import { createDefaultLogger, type Logger } from '../logger.js';
import type { KubeObject, ResourceRef } from '../types.js';
import { answerClientError } from './http/clientError.js';
import { Cluster } from './cluster.js';
import { toVersion } from './api/conversion.js';
import { Faults } from './faults.js';
import { createRequestHandler, type HandlerContext } from './http/handler.js';
import { createUpgradeHandler } from './http/upgrade.js';
import { deepFreeze } from '../util/json.js';
import { writePrivateFile } from '../util/privateFile.js';
import { kubeconfigYaml, makeKubeConfig } from './kubeconfig.js';
import { RequestLog, type RequestLogEntry } from './http/requestLog.js';
import { describeRef, type ResourceType } from './api/resourceType.js';
import { ApiError } from './api/statusError.js';
import { Access, type AccessSubject } from './auth/access.js';
import { servingCertificate } from './auth/servingCertificate.js';

/** How to start the embedded API server: where it listens, how much history it keeps, who may call it. */
export interface ApiServerOptions {
  /** Default 0: any free port. */
  port?: number;
  /** Default 127.0.0.1. */
  host?: string;
  /**
   * Changes kept for watch resume and consistent paging; older ones are 410
   * Expired. A watch whose client reads so slowly that it falls out of this
   * window is ended (cleanly, as kube ends slow watchers). Default 10,000.
   */
  historyWindow?: number;
  /** Period of BOOKMARK events on watches that allow them. Default 60,000 ms, as kube. */
  bookmarkIntervalMs?: number;
  /**
   * Honour KEP-5866's `shardSelector` on lists and watches, with `shardInfo` on list answers, as
   * kube-apiserver does with the `ShardedListAndWatch` feature gate on. Default true; false serves
   * as a server without the feature: the parameter is ignored, everything is served, no
   * `shardInfo`, so clients can be tested on their own-side filtering.
   */
  shardedListAndWatch?: boolean;
  /** Where the server logs failed requests and controller steps (default: pino to stderr). */
  logger?: Logger;
  /**
   * When set, every request needs `Authorization: Bearer <token>` (else
   * 401); with `rbac`, this is the admin's token (made up when not given).
   */
  token?: string;
  /**
   * Authentication and RBAC as a kube cluster has them (default false: every
   * request may do anything). Requests then need a bearer token (401
   * otherwise): the default kubeconfig's is a `system:masters` admin,
   * `kubeConfigFor` makes others. Roles, ClusterRoles (aggregated, too),
   * RoleBindings and ClusterRoleBindings decide what each may do, from the
   * next request after they change (403, worded as kube words it,
   * otherwise). kube's default ClusterRoles and bindings exist from the start.
   */
  rbac?: boolean;
  /**
   * Serve HTTPS, with a self-signed certificate made at start (the
   * kubeconfigs skip verifying it). Default: on with `rbac`, since kubectl
   * sends a kubeconfig's token only over TLS; off otherwise.
   */
  tls?: boolean;
  /**
   * The IPv4 CIDR that Services' cluster IPs are allocated from (default `10.0.0.0/24`, kube-apiserver's
   * `--service-cluster-ip-range` default); node ports come from kube's 30000-32767.
   */
  serviceCidr?: string;
}

export type { AccessSubject };

/** A running embedded API server: where it is, how to reach it, what it holds, and the handles a test needs. */
export interface ApiServer {
  /** `http://host:port`. */
  readonly url: string;
  /** A client-node KubeConfig for this server, ready to use. */
  kubeConfig(): KubeConfig;
  /** A kubeconfig for this server as YAML, for kubectl. */
  kubeconfigYaml(): string;
  /**
   * Writes `kubeconfigYaml()` to `path`, readable by its owner only (0600,
   * an existing file's mode set so too); refuses a symbolic link and a file
   * another user owns.
   */
  writeKubeconfig(path: string): Promise<void>;
  /**
   * A KubeConfig that authenticates as `subject`: a ServiceAccount, with a
   * token this server signs (valid while the account exists, an hour by
   * default) and its namespace as the context's, or a user in groups (and
   * `system:authenticated`). What it may do is up to RBAC (with `rbac` off,
   * anything).
   */
  kubeConfigFor(subject: AccessSubject): KubeConfig;
  /** The same as YAML, for kubectl. */
  kubeconfigYamlFor(subject: AccessSubject): string;
  /** Ends every open watch, destroys every connection and frees the port. */
  close(): Promise<void>;
  /** The current global resourceVersion. */
  readonly resourceVersion: string;
  /** The stored objects of a resource (frozen), in one namespace when given: for tests to compare caches against. */
  snapshot(resource: ResourceRef): KubeObject[];
  /** Faults to inject: failed requests, latency, dropped, silenced or malformed watches, compaction. */
  readonly faults: Faults;
  /** Every request seen (the latest 10,000), oldest first. */
  readonly requestLog: readonly RequestLogEntry[];
  /** Empties `requestLog`. */
  clearRequestLog(): void;
  /** How many watches are open now. */
  openWatches(): number;
  /**
   * Writes an object in-process, through the same write path as HTTP but
   * without faults or preconditions: creates it, or replaces what is stored
   * (status included). For seeding tests and driving benchmarks.
   */
  put(resource: ResourceRef, object: KubeObject): KubeObject;
  /** Deletes an object in-process (finalizers and garbage collection apply). Returns false when it was not there. */
  remove(resource: ResourceRef, name: string): boolean;
}

const defaultNamespaces = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

/** A ServiceAccount's kubeconfig works in its own namespace by default, as its Pods do. */
function contextNamespace(subject: AccessSubject): string {
  return 'serviceAccount' in subject ? (subject.serviceAccount.split('/')[0] ?? 'default') : 'default';
}

/**
 * Starts the embedded Kubernetes API server: an in-memory kube-apiserver
 * speaking the real HTTP protocol on loopback, so the unmodified
 * `@kubernetes/client-node` and kubectl work against it, with faults on
 * demand. The `default`, `kube-system`, `kube-public` and
 * `kube-node-lease` namespaces exist from the start.
 *
 * ```ts
 * const server = await startApiServer();
 * const core = server.kubeConfig().makeApiClient(CoreV1Api);
 * await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'x' } } });
 * server.faults.dropWatches();
 * await server.close();
 * ```
 */
export async function startApiServer(options: ApiServerOptions = {}): Promise<ApiServer> {
  const logger = options.logger ?? createDefaultLogger({ component: 'apiserver' });
  const historyWindow = options.historyWindow ?? 10_000;
  const bookmarkIntervalMs = options.bookmarkIntervalMs ?? 60_000;
  const host = options.host ?? '127.0.0.1';
  const cluster = new Cluster({ historyWindow, logger, ...(options.serviceCidr === undefined ? {} : { serviceCidr: options.serviceCidr }) });
  const faults = new Faults(cluster.hub, cluster.store);
  const requestLog = new RequestLog();
  const sockets = new Set<Socket>();
  const sleepers = new Set<{ timer: NodeJS.Timeout; resolve: () => void }>();
  let address = '';
  let closed: Promise<void> | undefined;

  const nsType = cluster.namespaceType();
  for (const name of defaultNamespaces) cluster.put(nsType, { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, 'kube-apiserver', { ownWrite: true });
  const access = new Access(cluster, { rbac: options.rbac ?? false, token: options.token });
  const token = access.token;

  const handlerContext: HandlerContext = {
    cluster,
    faults,
    bookmarkIntervalMs,
    shardedListAndWatch: options.shardedListAndWatch ?? true,
    logger,
    token,
    access,
    requestLog,
    now: cluster.now,
    startedAt: cluster.now(),
    address: () => address,
    sleep: (ms) =>
      new Promise<void>((resolve) => {
        const sleeper = {
          resolve,
          timer: setTimeout(() => {
            sleepers.delete(sleeper);
            resolve();
          }, ms),
        };
        sleepers.add(sleeper);
      }),
  };
  const handler = createRequestHandler(handlerContext);
  // A large socket buffer lets a burst of watch events go out in few writes. Request lines
  // and headers up to 1 MiB, as kube-apiserver (Go's default) takes them: Node's 16 KiB
  // would refuse a long selector (a sharded replica's shardSelector) with a 431 kube never sends.
  const tls = options.tls ?? options.rbac ?? false;
  const serving = { highWaterMark: 256 * 1024, maxHeaderSize: 1 << 20 };
  const server: Server = tls
    ? createTlsServer({ ...serving, ...(await servingCertificate(host, Date.now())) }, handler)
    : createServer(serving, handler);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', answerClientError);
  server.on('upgrade', createUpgradeHandler(handlerContext));
  const bound = await listen(server, options.port ?? 0, host);
  address = `${bound.family === 'IPv6' ? `[${bound.address}]` : bound.address}:${bound.port}`;
  const url = `${tls ? 'https' : 'http'}://${address}`;

  function typeOf(ref: ResourceRef): ResourceType {
    const type = cluster.registry.lookup(ref.group ?? '', ref.version, ref.resource);
    if (type === undefined) throw new Error(`the server does not serve ${describeRef({ ...ref, group: ref.group ?? '' })}`);
    return type;
  }

  return {
    url,
    kubeConfig: () => makeKubeConfig(url, token),
    kubeconfigYaml: () => kubeconfigYaml(url, token),
    writeKubeconfig: (path) => writePrivateFile(path, kubeconfigYaml(url, token)),
    kubeConfigFor: (subject) => makeKubeConfig(url, access.tokenFor(subject), contextNamespace(subject)),
    kubeconfigYamlFor: (subject) => kubeconfigYaml(url, access.tokenFor(subject), contextNamespace(subject)),
    get resourceVersion() {
      return String(cluster.store.resourceVersion);
    },
    snapshot: (ref) => cluster.objects(typeOf(ref), ref.namespace),
    faults,
    get requestLog() {
      return requestLog.all();
    },
    clearRequestLog: () => requestLog.clear(),
    openWatches: () => cluster.hub.count(),
    put(ref, object) {
      const type = typeOf(ref);
      const namespaced = type.namespaced ? { namespace: object.metadata?.namespace ?? ref.namespace ?? 'default' } : {};
      const stored = cluster.put(type, { ...object, metadata: { ...object.metadata, ...namespaced } }, 'rxkube-test');
      return deepFreeze(toVersion(type, stored.object));
    },
    remove(ref, name) {
      const type = typeOf(ref);
      try {
        cluster.delete(type, ref.namespace, name, {});
        return true;
      } catch (error) {
        if (error instanceof ApiError && error.code === 404) return false;
        throw error;
      }
    },
    close() {
      closed ??= new Promise<void>((resolve) => {
        for (const watcher of cluster.hub.all()) watcher.stream.end();
        for (const sleeper of sleepers) {
          clearTimeout(sleeper.timer);
          sleeper.resolve();
        }
        sleepers.clear();
        access.close();
        cluster.close();
        server.close(() => resolve());
        server.closeAllConnections();
        for (const socket of sockets) socket.destroy();
      });
      return closed;
    },
  };
}
