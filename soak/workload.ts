import { KubernetesObjectApi, PatchStrategy, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import type { KubeObject, ResourceRef } from 'rxkube';
import type { ApiServer } from 'rxkube/testing';
import { autoscalerManifest, deploymentManifest } from '../examples/podautoscaler/manifests.js';
import { MIRROR_LABEL, SOURCE } from './mirror/types.js';
import type { Random } from './random.js';
import { bump } from './stats.js';
import { appConfigName, appName, freshSourceName, sourceName, subjectId, subjectsOf, type ObjectKind } from './subjects.js';

/** Where the workload's objects live. */
export const resources = {
  configmaps: (namespace: string): ResourceRef => ({ group: '', version: 'v1', resource: 'configmaps', namespace }),
  deployments: (namespace: string): ResourceRef => ({ group: 'apps', version: 'v1', resource: 'deployments', namespace }),
  podautoscalers: (namespace: string): ResourceRef => ({ group: 'autoscaling.rxkube.dev', version: 'v1', resource: 'podautoscalers', namespace }),
};

export interface WorkloadOptions {
  server: ApiServer;
  kubeConfig: KubeConfig;
  namespace: string;
  random: Random;
  /** Operations per second. */
  rate: number;
  /** Share of the operations sent over HTTP through client-node (the rest are in-process writes). */
  httpShare: number;
  /** HTTP operations in flight at most; beyond, an operation is written in-process instead (or skipped if it has no in-process form). */
  maxHttpInFlight: number;
  /** Mirror sources (ConfigMaps labelled `mirror=src`) the workload keeps between 0 and this many of. */
  sources: number;
  /** Apps: each a ConfigMap, a Deployment using it and a PodAutoscaler targeting it. 0 for a sources-only workload. */
  apps: number;
  /**
   * Share of the source operations spent on fresh names, never used before
   * (`freshSourceName`): each creates a new source, or deletes the oldest
   * fresh one once `freshLive` of them exist. The keys ever seen then keep
   * growing while the keys alive stay bounded, so a leak per key name keeps
   * growing after the heap's baseline instead of filling up before it.
   */
  freshShare: number;
  freshLive: number;
  /** Told of every subject a write (or an attempt) may unsettle, by id (see `subjects.ts`). */
  touched: (subject: string) => void;
}

export interface WorkloadStats {
  /** Operations by `kind.verb.path` (path `http` or `local`). */
  operations: Record<string, number>;
  /** HTTP operations that failed, by status code (or `network`). */
  httpErrors: Record<string, number>;
  /** Operations skipped because too many HTTP ones were in flight. */
  skipped: number;
  /** Fresh names created (see `freshShare`). */
  freshNames: number;
}

interface Op {
  kind: ObjectKind;
  name: string;
  verb: 'create' | 'update' | 'scale' | 'reset' | 'delete';
}

/**
 * Creates, updates and deletes objects at a steady rate: mirror sources,
 * and apps (a ConfigMap, a Deployment that mounts it and a PodAutoscaler
 * targeting it). About `httpShare` of the writes go over HTTP through
 * client-node's `KubernetesObjectApi` (so the server's real request path,
 * and its injected faults, carry load); the rest are the embedded server's
 * in-process writes. It keeps a model of which objects exist from its own
 * writes, corrected by the server's answers (404, 409).
 */
export class Workload {
  readonly stats: WorkloadStats = { operations: {}, httpErrors: {}, skipped: 0, freshNames: 0 };
  private readonly api: KubernetesObjectApi;
  private readonly present = new Set<string>();
  private readonly busy = new Set<string>();
  private readonly inFlight = new Set<Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private startedAt = 0;
  private issued = 0;
  private version = 0;
  /** Fresh names created and not yet deleted, oldest first. */
  private readonly fresh: string[] = [];

  constructor(private readonly options: WorkloadOptions) {
    this.api = KubernetesObjectApi.makeApiClient(options.kubeConfig);
  }

  /** Writes every object once, in-process: the population the controllers list when they start. */
  seed(): void {
    const { sources, apps } = this.options;
    for (let i = 0; i < sources; i++) if (i % 2 === 0) this.local({ kind: 'source', name: sourceName(i), verb: 'create' });
    for (let i = 0; i < apps; i++) {
      for (const kind of ['appConfig', 'deployment', 'autoscaler'] as const) this.local({ kind, name: appName(i), verb: 'create' });
    }
  }

  start(): void {
    if (this.timer !== undefined) return;
    this.startedAt = Date.now();
    this.issued = 0;
    this.timer = setInterval(() => this.tick(), 10);
  }

  /** Stops issuing operations and waits for those over HTTP still in flight. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.inFlight]);
  }

  private tick(): void {
    const due = Math.floor(((Date.now() - this.startedAt) / 1000) * this.options.rate) - this.issued;
    // After a stall (a long GC, a busy machine) catch up by at most 100 ms of operations, not in one burst.
    const n = Math.min(due, Math.ceil(this.options.rate / 10));
    if (due > n) this.issued += due - n;
    for (let i = 0; i < n; i++) {
      this.issued++;
      this.step();
    }
  }

  private step(): void {
    const op = this.choose();
    if (op === undefined) return;
    const key = `${op.kind}/${op.name}`;
    if (this.busy.has(key)) return;
    const localForm = op.verb !== 'scale' && !(op.kind === 'autoscaler' && op.verb === 'update');
    const wantHttp = !localForm || this.options.random.chance(this.options.httpShare);
    if (wantHttp && this.inFlight.size < this.options.maxHttpInFlight) {
      this.http(op);
    } else if (localForm) {
      this.local(op);
    } else {
      this.stats.skipped++;
    }
  }

  private choose(): Op | undefined {
    const { random, sources, apps } = this.options;
    const roll = random.next();
    const kind: ObjectKind = apps === 0 || roll < 0.45 ? 'source' : roll < 0.6 ? 'appConfig' : roll < 0.75 ? 'deployment' : 'autoscaler';
    if (kind === 'source' && random.chance(this.options.freshShare)) return this.freshOp();
    const name = kind === 'source' ? sourceName(random.int(0, sources - 1)) : appName(random.int(0, apps - 1));
    if (!this.present.has(`${kind}/${name}`)) return { kind, name, verb: 'create' };
    const r = random.next();
    switch (kind) {
      case 'source':
        return { kind, name, verb: r < 0.75 ? 'update' : 'delete' };
      case 'appConfig':
        return { kind, name, verb: r < 0.9 ? 'update' : 'delete' };
      case 'deployment':
        return { kind, name, verb: r < 0.5 ? 'scale' : r < 0.8 ? 'reset' : 'delete' };
      case 'autoscaler':
        return { kind, name, verb: r < 0.8 ? 'update' : 'delete' };
    }
  }

  /** A new source under a name never used before, or, once `freshLive` exist, the deletion of the oldest. */
  private freshOp(): Op | undefined {
    if (this.fresh.length < this.options.freshLive) {
      const name = freshSourceName(++this.stats.freshNames);
      this.fresh.push(name);
      return { kind: 'source', name, verb: 'create' };
    }
    const oldest = this.fresh[0]!;
    // Its create may still be on its way: try again on a later tick.
    if (this.busy.has(`source/${oldest}`)) return undefined;
    this.fresh.shift();
    return { kind: 'source', name: oldest, verb: 'delete' };
  }

  /** The object an operation writes in full (create, update of a ConfigMap, reset of a Deployment). */
  private manifest(op: Op): KubeObject {
    const { namespace, random } = this.options;
    const v = String(++this.version);
    switch (op.kind) {
      case 'source':
        return {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: op.name, namespace, labels: { [MIRROR_LABEL]: SOURCE } },
          data: { v, payload: 'x'.repeat(random.int(0, 512)) },
        } as KubeObject;
      case 'appConfig':
        return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: appConfigName(op.name), namespace }, data: { v } } as KubeObject;
      case 'deployment': {
        const deployment = deploymentManifest(namespace, op.name, random.int(1, 3));
        (deployment.spec as { template: { spec: Record<string, unknown> } }).template.spec.volumes = [
          { name: 'config', configMap: { name: appConfigName(op.name) } },
        ];
        return deployment;
      }
      case 'autoscaler':
        return autoscalerManifest(namespace, op.name, op.name, random.int(0, 5));
    }
  }

  private ref(kind: ObjectKind): ResourceRef {
    const { namespace } = this.options;
    return kind === 'deployment' ? resources.deployments(namespace) : kind === 'autoscaler' ? resources.podautoscalers(namespace) : resources.configmaps(namespace);
  }

  private objectName(op: Op): string {
    return op.kind === 'appConfig' ? appConfigName(op.name) : op.name;
  }

  private touch(op: Op): void {
    for (const [kind, name] of subjectsOf(op.kind, op.name)) this.options.touched(subjectId(kind, this.options.namespace, name));
  }

  private local(op: Op): void {
    const { server } = this.options;
    this.touch(op);
    bump(this.stats.operations, `${op.kind}.${op.verb}.local`);
    const key = `${op.kind}/${op.name}`;
    if (op.verb === 'delete') {
      server.remove(this.ref(op.kind), this.objectName(op));
      this.present.delete(key);
    } else {
      server.put(this.ref(op.kind), this.manifest(op));
      this.present.add(key);
    }
  }

  private http(op: Op): void {
    const key = `${op.kind}/${op.name}`;
    this.busy.add(key);
    this.touch(op);
    bump(this.stats.operations, `${op.kind}.${op.verb}.http`);
    const call = this.send(op)
      .then(() => {
        if (op.verb === 'delete') this.present.delete(key);
        else this.present.add(key);
      })
      .catch((err: unknown) => {
        const code = (err as { code?: unknown }).code;
        bump(this.stats.httpErrors, typeof code === 'number' ? String(code) : 'network');
        if (code === 404) this.present.delete(key);
        if (code === 409 && op.verb === 'create') this.present.add(key);
      })
      .finally(() => {
        this.busy.delete(key);
        this.inFlight.delete(call);
        // The HTTP write may also have touched what a reconcile read meanwhile.
        this.touch(op);
      });
    this.inFlight.add(call);
  }

  private async send(op: Op): Promise<void> {
    const { namespace, random } = this.options;
    const header = (apiVersion: string, kind: string): KubernetesObject => ({ apiVersion, kind, metadata: { name: this.objectName(op), namespace } });
    const merge = (body: KubernetesObject) => this.api.patch(body, undefined, undefined, 'soak-workload', undefined, PatchStrategy.MergePatch);
    switch (op.verb) {
      case 'create':
        await this.api.create(this.manifest(op) as KubernetesObject, undefined, undefined, 'soak-workload');
        return;
      case 'update':
        if (op.kind === 'autoscaler') {
          await merge({ ...header('autoscaling.rxkube.dev/v1', 'PodAutoscaler'), spec: { replicas: random.int(0, 5) } } as KubernetesObject);
        } else {
          const { data } = this.manifest(op) as KubeObject & { data: Record<string, string> };
          await merge({ ...header('v1', 'ConfigMap'), data } as KubernetesObject);
        }
        return;
      case 'scale':
        await merge({ ...header('apps/v1', 'Deployment'), spec: { replicas: random.int(6, 9) } } as KubernetesObject);
        return;
      case 'reset':
        await this.api.replace(this.manifest(op) as KubernetesObject, undefined, undefined, 'soak-workload');
        return;
      case 'delete': {
        const [apiVersion, kind] =
          op.kind === 'deployment' ? ['apps/v1', 'Deployment'] : op.kind === 'autoscaler' ? ['autoscaling.rxkube.dev/v1', 'PodAutoscaler'] : ['v1', 'ConfigMap'];
        await this.api.delete(header(apiVersion, kind));
        return;
      }
    }
  }
}
