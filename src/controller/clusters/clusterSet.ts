import type { KubeConfig } from '@kubernetes/client-node';
import { defer, EMPTY, from, isObservable, merge, type Observable, ReplaySubject, Subject, type Subscription } from 'rxjs';
import type { InformerFactory } from '../../informers/informerFactory.js';
import type { Logger } from '../../logger.js';
import type { KubeClient } from '../../sinks/client/kubeClient.js';
import type { EventRecorder } from '../../sinks/events/eventRecorder.js';
import { badClusterName } from './clusterKeys.js';

/**
 * One cluster of a multi-cluster controller, when a bare `KubeConfig` is not
 * enough: the informers to share with other controllers of the process (an
 * `InformerFactory` on this cluster), or the client and Event recorder its
 * reconciles get (default: ones on `kubeConfig`, as for a single cluster).
 */
export interface ClusterConnection {
  /** Where the cluster is and how to authenticate. */
  readonly kubeConfig: KubeConfig;
  /** The informers of this cluster (default: a factory of its own). */
  readonly informers?: InformerFactory;
  /** The client of `ctx.client` for this cluster's keys. */
  readonly client?: KubeClient;
  /** The recorder of `ctx.recorder` for this cluster's keys. */
  readonly recorder?: EventRecorder;
}

/**
 * A cluster joining or leaving a multi-cluster controller (what
 * multicluster-runtime's providers tell its manager). A `Joined` of a name
 * already joined replaces that cluster (a rotated credential): it leaves,
 * then the new one joins.
 */
export type ClusterEvent =
  | { readonly type: 'Joined'; readonly name: string; readonly cluster: KubeConfig | ClusterConnection }
  | { readonly type: 'Left'; readonly name: string };

/** `controller({ clusters })`: a fixed set of clusters by name, or an Observable of clusters joining and leaving. */
export type ControllerClusters = Readonly<Record<string, KubeConfig | ClusterConnection>> | Observable<ClusterEvent>;

/** A KubeConfig by its shape: a copy of client-node other than ours makes ones that are no `instanceof` ours. */
function isKubeConfig(value: unknown): value is KubeConfig {
  return value !== null && typeof value === 'object' && typeof (value as KubeConfig).getCurrentCluster === 'function' && typeof (value as KubeConfig).makeApiClient === 'function';
}

/** Why a cluster's entry is refused, or undefined. */
function badConnection(value: unknown): string | undefined {
  if (isKubeConfig(value)) return undefined;
  if (value !== null && typeof value === 'object' && isKubeConfig((value as { kubeConfig?: unknown }).kubeConfig)) return undefined;
  return 'needs a KubeConfig, or { kubeConfig, informers?, client?, recorder? }';
}

/** `clusters` as events; a fixed set is checked at once (a TypeError naming the entry), an Observable's events as they come. */
export function clusterEvents(controller: string, clusters: ControllerClusters): Observable<ClusterEvent> {
  if (isObservable(clusters)) return clusters;
  if (clusters === null || typeof clusters !== 'object' || Array.isArray(clusters)) {
    throw new TypeError(`controller "${controller}": clusters must be a record of name → KubeConfig, or an Observable of ClusterEvents`);
  }
  const events: ClusterEvent[] = Object.entries(clusters).map(([name, cluster]) => {
    const bad = badClusterName(name) ?? (badConnection(cluster) === undefined ? undefined : `cluster "${name}" ${badConnection(cluster) ?? ''}`);
    if (bad !== undefined) throw new TypeError(`controller "${controller}": clusters: ${bad}`);
    return { type: 'Joined', name, cluster };
  });
  return from(events);
}

/** What a cluster is while it is joined: the parts `make` built for it, and the signs of its leaving. */
export interface JoinedCluster<P> {
  readonly name: string;
  readonly parts: P;
  /** Emits (and completes) when the cluster leaves. */
  readonly left: Observable<void>;
  /** Aborted when the cluster leaves: the runs of its keys in flight end. */
  readonly signal: AbortSignal;
}

interface Connection<P> {
  readonly current: Map<string, JoinedCluster<P> & { readonly leave: () => void }>;
  /** Errors when the source of clusters fails (or an event is no cluster). */
  readonly failed: ReplaySubject<never>;
  subscription: Subscription | undefined;
}

/**
 * The clusters joined now, kept from the events of `clusters` while
 * connected (one connection per run of the controller): each joining
 * cluster gets its parts from `make`, and `unmake` when it leaves or the
 * connection ends. An event that is no `ClusterEvent`, or a source that
 * errors, errors `clusters` (and so the controller) with a message naming it.
 */
export class ClusterSet<P> {
  private connection: Connection<P> | undefined;
  /** Every join, of every connection: who listens before a run starts (the timeline of a recording) hears the clusters it brings. */
  private readonly joins = new Subject<JoinedCluster<P>>();

  constructor(
    private readonly controller: string,
    private readonly events: Observable<ClusterEvent>,
    private readonly make: (name: string, connection: ClusterConnection) => P,
    private readonly unmake: (cluster: JoinedCluster<P>) => Promise<void>,
    private readonly logger: Logger,
    private readonly onChange: (joined: number) => void,
  ) {}

  /** The cluster joined under `name` now, if any. */
  get(name: string): JoinedCluster<P> | undefined {
    return this.connection?.current.get(name);
  }

  /** Every cluster joined now. */
  all(): JoinedCluster<P>[] {
    return [...(this.connection?.current.values() ?? [])];
  }

  /** Every cluster joined now, then each as it joins (in this run and later ones); errors when the source of clusters of the run under way fails. */
  readonly clusters: Observable<JoinedCluster<P>> = defer(() => merge(from(this.all()), this.joins, this.connection?.failed ?? EMPTY));

  /** Starts following the events of clusters; the clusters known at once (a fixed set) have joined when it returns. */
  connect(): void {
    if (this.connection !== undefined) return;
    const current: Connection<P>['current'] = new Map();
    const failed = new ReplaySubject<never>(1);
    const connection: Connection<P> = { current, failed, subscription: undefined };
    this.connection = connection;
    connection.subscription = this.events.subscribe({
      next: (event) => {
        try {
          this.apply(connection, event);
        } catch (err) {
          failed.error(err);
        }
      },
      error: (err: unknown) => failed.error(new Error(`controller "${this.controller}": its clusters failed: ${err instanceof Error ? err.message : String(err)}`, { cause: err })),
    });
  }

  /** Stops following: every cluster leaves (its runs aborted, its own recorder closed); settles once they are closed. */
  async disconnect(): Promise<void> {
    const connection = this.connection;
    if (connection === undefined) return;
    this.connection = undefined;
    connection.subscription?.unsubscribe();
    const leaving = [...connection.current.values()];
    connection.current.clear();
    connection.failed.complete();
    this.onChange(0);
    await Promise.all(leaving.map((cluster) => this.end(cluster)));
  }

  private apply(connection: Connection<P>, event: ClusterEvent): void {
    const type = (event as { type?: unknown } | null)?.type;
    const name = (event as { name?: unknown } | null)?.name;
    const bad = type !== 'Joined' && type !== 'Left' ? `got ${JSON.stringify(event)}, which is no ClusterEvent ({ type: 'Joined' | 'Left', name })` : badClusterName(name);
    if (bad !== undefined) throw new TypeError(`controller "${this.controller}": clusters: ${bad}`);
    const clusterName = name as string;
    const before = connection.current.get(clusterName);
    if (type === 'Left') {
      if (before === undefined) return this.logger.warn({ cluster: clusterName }, 'a cluster that had not joined left; ignored');
      return this.leave(connection, before);
    }
    const given = (event as { cluster?: unknown }).cluster;
    const badGiven = badConnection(given);
    if (badGiven !== undefined) throw new TypeError(`controller "${this.controller}": clusters: cluster "${clusterName}" ${badGiven}`);
    if (before !== undefined) this.leave(connection, before);
    const connectionOf = isKubeConfig(given) ? { kubeConfig: given } : (given as ClusterConnection);
    const left = new ReplaySubject<void>(1);
    const abort = new AbortController();
    const cluster = {
      name: clusterName,
      parts: this.make(clusterName, connectionOf),
      left: left.asObservable(),
      signal: abort.signal,
      leave: () => {
        abort.abort(new Error(`cluster "${clusterName}" has left`));
        left.next();
        left.complete();
      },
    };
    connection.current.set(clusterName, cluster);
    this.logger.info({ cluster: clusterName, clusters: connection.current.size }, 'cluster joined');
    this.onChange(connection.current.size);
    this.joins.next(cluster);
  }

  private leave(connection: Connection<P>, cluster: JoinedCluster<P> & { readonly leave: () => void }): void {
    connection.current.delete(cluster.name);
    this.logger.info({ cluster: cluster.name, clusters: connection.current.size }, 'cluster left: its watches close, its runs in flight are aborted');
    this.onChange(connection.current.size);
    void this.end(cluster);
  }

  private async end(cluster: JoinedCluster<P> & { readonly leave: () => void }): Promise<void> {
    cluster.leave();
    await this.unmake(cluster).catch((err: unknown) => this.logger.warn({ cluster: cluster.name, err: String(err) }, 'closing a cluster failed'));
  }
}
