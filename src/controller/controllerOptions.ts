import type { KubeConfig } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import type { SchedulerLike } from 'rxjs';
import type { InformerFactory } from '../informers/informerFactory.js';
import type { Logger } from '../logger.js';
import type { KeysOf } from '../operators/owners.js';
import type { Predicate } from '../operators/predicates.js';
import type { RateLimiter } from '../operators/rateLimiters.js';
import type { KubeClient } from '../sinks/client/kubeClient.js';
import type { EventRecorder } from '../sinks/events/eventRecorder.js';
import type { LeaderElectionOptions } from '../sinks/leader/leaderElection.js';
import type { Indexers } from '../store/indexFunctions.js';
import type { Lister } from '../store/store.js';
import type { ListWatchOptions } from '../sources/listWatch.js';
import type { Delta, KubeObject, ResourceRef, Typed } from '../types.js';
import type { ControllerReconciler } from './controllerContext.js';
import { checkControllerAccess, type ControllerPermission } from './permissions.js';
import type { PriorityOptions } from './priorities.js';
import type { ReadYourWritesOptions } from './readYourWrites.js';
import { validateSharding, type ShardingOptions } from './sharding.js';
import type { ControllerClusters } from './clusters/clusterSet.js';
import type { TracingOptions } from '../observe/tracing/controllerTracing.js';
import type { TriggerOption } from './triggers.js';

/**
 * A resource a controller watches: where it lives, and what kind its objects are.
 * `T`, the type of its objects, only steers type inference (`controller({ for })`
 * gives the reconcile `ControllerContext<T>`); nothing reads it at run time.
 */
export interface WatchedResource<T extends KubeObject = KubeObject> extends ResourceRef, Typed<T> {
  /** The kind of its objects (`Deployment`): owner references name owners by group and kind. */
  kind: string;
  /** Only objects with these labels (kube's label selector syntax: `app=web,tier!=db`). */
  labelSelector?: string;
  /** Only objects whose fields match (kube's field selector syntax: `status.phase=Running`). */
  fieldSelector?: string;
  /**
   * Only this replica's share of it (KEP-5866; see `listWatch`'s `shardSelector`): a selector
   * text, `{ by: 'uid' | 'namespace', ranges }`, or an Observable of those for ranges that move.
   *
   * Owned and watched objects must reach the replica whose primary they map to, and their own
   * uids hash elsewhere than their owner's, so never shard them `by: 'uid'`. Two ways that work:
   * - shard the primary and every owned or watched resource `by: 'namespace'` with the same
   *   ranges: each replica caches and watches only its namespaces' objects of every kind (memory
   *   and watch traffic about 1/N each), but the split is only as even as the namespaces (one big
   *   namespace is one replica's; names that differ only in their last characters, `team-1` and
   *   `team-2`, hash close together and tend to share a range), and a mapping that crosses
   *   namespaces (a cluster-scoped owner, a watch mapped to keys in other namespaces) breaks;
   * - shard the primary (by uid or namespace) and leave owned and watched resources unsharded:
   *   correct for any mapping, at the price of every replica caching and watching all of them
   *   (memory and traffic of those do not shrink with N), while reconciles still split.
   */
  shardSelector?: ListWatchOptions<KubeObject>['shardSelector'];
  /** Extra indexes on its store, of its objects' type. */
  indexers?: Indexers<T>;
  /**
   * The priority of the keys its changes trigger (default
   * `NORMAL_PRIORITY`); its initial list and unchanged objects take
   * `priority.initial` and `priority.resync` of the controller.
   */
  priority?: number;
  /**
   * Watch only the objects' metadata (`PartialObjectMetadata`, as
   * controller-runtime's `OnlyMetadata`): its store holds `{ apiVersion:
   * 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata }`, enough
   * for owner references, labels and names at a fraction of the memory.
   */
  metadataOnly?: boolean;
}

/**
 * A resource whose objects have a known type `T`: `controller({ for })`
 * types the reconcile's `ctx.object` and `ctx.store` from it, `ctx.lister`
 * gives a `Lister<T>` of it, and, spread into a reference
 * (`{ ...deployments, namespace, name }`), `ctx.client.get` and `list`
 * return `T`. `rxkube/kinds` has one for each built-in kind.
 */
export interface TypedResource<T extends KubeObject> extends WatchedResource<T> {
  /** The group and version (`apps/v1`, `v1`), as objects and `ctx.client`'s references write them. */
  readonly apiVersion: string;
}

/**
 * An extra watch: changes of another resource, mapped to keys of the primary one.
 * `U`, the type of the watched objects, types the deltas `map` gets
 * (`{ resource: deployments, map: (delta: Delta<Deployment>) => … }`).
 */
export interface ExtraWatch<U extends KubeObject = KubeObject> {
  /** The resource to watch. */
  resource: WatchedResource<U>;
  /**
   * The primary keys a change concerns (none, one or several). A method, so
   * that a watch typed for its objects passes where `watches` takes any
   * (method parameters are compared both ways, as `Typed`'s).
   */
  map(delta: Delta<U>, stores: ControllerStores): KeysOf;
  /** The priority of the keys its changes trigger (default: `resource.priority`, else `NORMAL_PRIORITY`). */
  priority?: number;
}

/** Every store of a controller, by resource name (`deployments.apps`, `configmaps`). */
export type ControllerStores = Readonly<Record<string, Lister>>;

/**
 * What `controller()` wires: the primary resource, the resources it owns and watches, the reconcile,
 * and how the workqueue, metrics, leader election and shutdown behave.
 */
export interface ControllerOptions<T extends KubeObject> {
  /** Names the controller in metrics, logs, Events and as the field manager. */
  name: string;
  /** Where the cluster is and how to authenticate (client-node's `KubeConfig`); with `clusters`, the home cluster, which holds the Lease. */
  kubeConfig: KubeConfig;
  /**
   * Reconcile the objects of several clusters (docs/multicluster.md): a
   * record of name → KubeConfig, or an Observable of clusters joining and
   * leaving. Keys then carry the cluster (`cluster/namespace/name`, see
   * `clusterKey`); `ctx.client`, `ctx.store` and `ctx.stores` are the
   * key's cluster's. `kubeConfig` is then the home cluster: it holds the
   * Lease of `leaderElection`, and is reconciled only if listed here too.
   */
  clusters?: ControllerClusters;
  /**
   * The primary resource: its keys are what `reconcile` gets. A typed one
   * (`deployments` of `rxkube/kinds`, a `defineCustomResource`'s
   * `resource`) gives `T`, so the reconcile's `ctx` needs no type of its own.
   */
  for: WatchedResource<T>;
  /** Resources this controller creates and owns (with a controller owner reference): a change reconciles the owner. */
  owns?: WatchedResource[];
  /** Other resources whose changes concern primary keys. */
  watches?: ExtraWatch[];
  /**
   * Keys from outside the cluster (controller-runtime's `source.Channel`,
   * kube-rs's `reconcile_on`): Observables of keys or objects, bare or
   * named (`{ name, keys }`), such as a Git provider's push notifications
   * or `perObjectTimer(ms)`. Subscribed while the controller reconciles
   * (caches synced, leading), anew each time it starts; what one emits
   * meanwhile is not kept (every key is reconciled at the start anyway).
   * A trigger that errors, or emits what is no key, fails the controller
   * with a `TriggerError` naming it, as a failing source fails
   * controller-runtime's; one that completes just stops. See docs/triggers.md.
   */
  triggers?: readonly TriggerOption<T>[];
  /** The reconcile, run for each key of `for` that needs it, never twice at once for one key. */
  reconcile: ControllerReconciler<T>;
  /**
   * What the reconcile may do on the API server besides the list and watch
   * of `for`, `owns` and `watches` (which need no declaring): `rxkube
   * manifests` grants exactly these, with Events and the Lease, and no more.
   * Declarative only: the controller does not check that its requests stay within them.
   */
  permissions?: readonly ControllerPermission[];
  /**
   * Read-your-own-writes (off by default; `true` or `{ timeout }` turns it
   * on: its cost on the workqueue's bench is not reliably under 5 %): after a run
   * wrote objects through `ctx.client`, its key does not run again until
   * the caches show those writes (their resourceVersions, or later ones),
   * or `timeout` (10 s) has passed, when it runs anyway with a warning and
   * a count in `rxkube_own_write_waits_total{result="timeout"}`. A trigger
   * that comes before the write is back no longer acts on the stale cache
   * (a second child created, a status flapping). Writes to objects that no
   * store of the controller caches are not waited for. See docs/read-your-writes.md.
   */
  readYourWrites?: boolean | ReadYourWritesOptions;
  /** Reconciles in flight at most (default 1). */
  concurrency?: number;
  /**
   * How waiting keys are ordered (docs/priority.md): by default the keys of
   * initial lists and resyncs at `LOW_PRIORITY`, changes and `triggers` at
   * `NORMAL_PRIORITY`, with aging so that a low key waits at most one
   * minute plus the time to drain what was ahead of it. `{ aging: 0 }`:
   * plain arrival order.
   */
  priority?: PriorityOptions;
  /** Filters updates of the primary resource (creates and deletes always pass). */
  predicates?: Predicate<T>;
  /** The delays of retries (default `defaultControllerRateLimiter()`: per key 5 ms doubling to 1000 s, overall 10/s). */
  rateLimiter?: RateLimiter;
  /** Ms a reconcile may take before it counts as failed and its signal aborts. */
  timeout?: number;
  /** Retries in a row before a failing key is dropped until its next trigger (default: no limit). */
  maxRetries?: number;
  /** client-go's resyncPeriod for the primary resource (ms); off by default. */
  resyncPeriod?: number;
  /** Where the metrics go (default: a new Registry, never the global one). */
  registry?: Registry;
  /**
   * prom-client's default `process_*` and `nodejs_*` metrics on the
   * registry, once per registry (controller-runtime registers its process
   * collector by default). Default: true on the registry the controller
   * makes; false on a `registry` passed in, which is left as its owner made
   * it unless this says otherwise.
   */
  processMetrics?: boolean;
  /**
   * Where every wait happens (default `asyncScheduler`). Without one, the
   * metrics measure durations on a high-resolution clock (sub-millisecond);
   * with one, on its `now()`, so that virtual time stays virtual.
   */
  scheduler?: SchedulerLike;
  /** Run only while holding this Lease (client-go's algorithm). `kubeConfig` defaults to the controller's. */
  leaderElection?: Omit<LeaderElectionOptions, 'identity' | 'scheduler' | 'logger' | 'metrics' | 'stop' | 'requests'> & { identity?: string };
  /**
   * Split the primary keys over the live replicas (docs/sharding.md):
   * each reconciles only the keys of its slots of the hash space, handed
   * over between replicas so that no key ever runs on two at once. Not
   * with `leaderElection`.
   */
  sharding?: ShardingOptions;
  /** Aborting it shuts the controller down gracefully, and the output completes. */
  signal?: AbortSignal;
  /**
   * How long the caches may take to sync at start (ms, default 120 000, as
   * controller-runtime's `CacheSyncTimeout`; on the scheduler's clock):
   * past it, the controller errors naming each resource that did not sync
   * and why. `Infinity` waits for ever.
   */
  cacheSyncTimeout?: number;
  /** How long in-flight reconciles may take to finish at shutdown before they are aborted (ms, default 30 000). */
  gracePeriod?: number;
  /** Aborting it, once shutting down, ends the grace period at once: runs still in flight are aborted (a second SIGTERM). */
  stopNow?: AbortSignal;
  /** Where it logs (default: pino JSON lines on stderr; `silentLogger` for none). */
  logger?: Logger;
  /**
   * OpenTelemetry traces of its runs (docs/tracing.md): a span per run
   * linked to its causes, a child span per `ctx.client` request. On by
   * itself once an SDK is registered globally (`@opentelemetry/api`'s
   * no-op until then, at no cost per run); this sets the provider and the
   * `rxkube.io/traceparent` annotation across controllers.
   */
  tracing?: TracingOptions;
  /** Share informers with other controllers of this process (default: a factory of its own, whose requests count in `rest_client_*`). */
  informers?: InformerFactory;
  /** The client for writes (default: one on `kubeConfig`, field manager = `name`, whose requests count in `rest_client_*`). */
  client?: KubeClient;
  /** The Event recorder (default: one on `client`, reporting as `name`). */
  recorder?: EventRecorder;
}

/** Throws a TypeError naming what is wrong with `options`, before anything is made of them. */
export function validateOptions<T extends KubeObject>(options: ControllerOptions<T>): void {
  if (typeof options.name !== 'string' || options.name === '') throw new TypeError('controller needs a non-empty name');
  if (typeof options.reconcile !== 'function') throw new TypeError(`controller "${options.name}" needs a reconcile function`);
  if (!options.kubeConfig) throw new TypeError(`controller "${options.name}" needs a kubeConfig`);
  checkControllerAccess(options);
  if (options.sharding !== undefined) {
    if (options.leaderElection !== undefined) throw new TypeError(`controller "${options.name}": sharding and leaderElection cannot both be set (sharding has its own Leases)`);
    validateSharding(options.name, options.sharding);
  }
}
