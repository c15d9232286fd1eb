import {
  finalizer,
  FinalizerError,
  isInvalid,
  isNotFound,
  setCondition,
  splitKey,
  type ConditionUpdate,
  type ControllerContext,
  type EventInput,
  type JsonPatchOperation,
  type Lister,
  type ObjectKey,
} from 'rxkube';
import { deployments, type Deployment } from 'rxkube/kinds';
import { BY_SCALER, BY_TARGET, FINALIZER, SCALED_BY, type PodAutoscaler, type PodAutoscalerStatus } from './types.js';

/**
 * Brings the Deployment a PodAutoscaler targets to the replicas it asks for.
 *
 * Level-triggered and idempotent: it compares the cache with what should be
 * and writes only the difference, so a rerun, a retry after a failed write
 * or a restart of the controller changes nothing that is already right.
 *
 * - The first run only adds the finalizer; the write brings the object back.
 * - The Deployment is never owned: only its `spec.replicas` and the
 *   `scaled-by` annotation are patched. Letting go of a Deployment (the
 *   autoscaler retargeted, lost a claim, or is being deleted) removes that
 *   annotation again, guarded so that it never removes another's.
 * - When several PodAutoscalers target one Deployment, the oldest (then the
 *   first by name) drives it; the others report `DeploymentClaimed`, so two
 *   of them never fight over the replicas.
 * - Status: `Ready` (`Scaled`, `DeploymentNotFound`, `DeploymentClaimed`,
 *   `InvalidSpec`), `observedGeneration`, `currentReplicas`; an Event for
 *   each scaling and each change into a failing state.
 *
 * It reads `ctx.object`, `ctx.store` (the PodAutoscalers, with the
 * `targetDeployment` index), `ctx.lister(deployments)` (with the `scaledBy`
 * index) and writes
 * through `ctx.client` and `ctx.recorder` only.
 */
export async function reconcilePodAutoscaler(key: ObjectKey, ctx: ControllerContext<PodAutoscaler>): Promise<void> {
  let pa = ctx.object;
  if (pa === undefined) {
    // Gone, and its cleanup ran; but that cleanup read a cache that may not
    // have shown a stamp it had just written. Such a stamp brings the key
    // here (the Deployment maps to the autoscaler its stamp names): let go.
    const { namespace, name } = splitKey(key);
    await letGo(namespace ?? '', name, storesOf(ctx), ctx, undefined);
    return;
  }
  if (pa.metadata.deletionTimestamp) {
    // The cache may still show one whose cleanup is done and which is gone:
    // read the server before cleaning up (and recording Released) again.
    try {
      pa = await ctx.client.get(pa, { signal: ctx.signal });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
  }
  try {
    await finalizer(ctx.client, FINALIZER, pa, { apply: (live) => scale(live, ctx), cleanup: (live) => release(live, ctx) }, { signal: ctx.signal });
  } catch (err) {
    // Our finalizer was the last: removing it let the object go, which is what we wanted.
    if (err instanceof FinalizerError && err.phase === 'remove' && isNotFound(err.cause)) return;
    throw err;
  }
}

interface Stores {
  autoscalers: Lister<PodAutoscaler>;
  deployments: Lister<Deployment>;
}

/** The PodAutoscaler store (the primary) and the Deployment store; `ctx.lister` throws, naming the stores there are, when Deployments are not watched. */
function storesOf(ctx: ControllerContext<PodAutoscaler>): Stores {
  return { autoscalers: ctx.store, deployments: ctx.lister(deployments) };
}

async function scale(pa: PodAutoscaler, ctx: ControllerContext<PodAutoscaler>): Promise<void> {
  const stores = storesOf(ctx);
  const name = pa.metadata.name as string;
  const namespace = pa.metadata.namespace ?? '';
  const problem = specProblem(pa);
  if (problem !== undefined) {
    await letGo(namespace, name, stores, ctx, undefined);
    await report(pa, ctx, { status: 'False', reason: 'InvalidSpec', message: problem }, undefined, 'Warning');
    return;
  }
  const target = pa.spec.targetDeployment;
  const desired = pa.spec.replicas;

  const holder = claimant(pa, stores.autoscalers.byIndex(BY_TARGET, `${namespace}/${target}`));
  if (holder !== name) {
    await letGo(namespace, name, stores, ctx, undefined);
    const message = `deployment "${target}" is scaled by PodAutoscaler "${holder}", the oldest that targets it`;
    await report(pa, ctx, { status: 'False', reason: 'DeploymentClaimed', message }, undefined, 'Warning');
    return;
  }
  await letGo(namespace, name, stores, ctx, target);

  const deployment = stores.deployments.get(`${namespace}/${target}`);
  if (deployment === undefined) {
    await notFound(pa, ctx);
    return;
  }
  // A Deployment without replicas has one: the API server's default.
  let current = deployment.spec?.replicas ?? 1;
  if (current !== desired || deployment.metadata.annotations?.[SCALED_BY] !== name) {
    let patched: Deployment;
    try {
      patched = await ctx.client.patchMerge(
        deployment,
        { metadata: { annotations: { [SCALED_BY]: name } }, spec: { replicas: desired } },
        { signal: ctx.signal },
      );
    } catch (err) {
      // The cache still had it; the server has it no more. Its delete event brings us back.
      if (isNotFound(err)) return notFound(pa, ctx);
      throw err;
    }
    if (current !== desired) {
      ctx.recorder.record(pa, {
        type: 'Normal',
        reason: 'Scaled',
        action: 'Scale',
        note: `scaled deployment "${target}" from ${current} to ${desired} replicas`,
        related: patched,
      });
    }
    current = patched.spec?.replicas ?? desired;
  }
  await report(pa, ctx, { status: 'True', reason: 'Scaled', message: `deployment "${target}" has ${current} replicas` }, current);
}

async function notFound(pa: PodAutoscaler, ctx: ControllerContext<PodAutoscaler>): Promise<void> {
  const message = `deployment "${pa.spec.targetDeployment}" not found in namespace "${pa.metadata.namespace ?? ''}"`;
  await report(pa, ctx, { status: 'False', reason: 'DeploymentNotFound', message }, undefined, 'Warning');
}

/** The finalizer's cleanup: let go of every Deployment it stamped, and say so. */
async function release(pa: PodAutoscaler, ctx: ControllerContext<PodAutoscaler>): Promise<void> {
  const released = await letGo(pa.metadata.namespace ?? '', pa.metadata.name as string, storesOf(ctx), ctx, undefined);
  const note =
    released.length === 0
      ? 'deleted; it was scaling no deployment'
      : `deleted; stopped scaling deployment ${released.map((d) => `"${d.metadata.name ?? ''}" (left at ${d.spec?.replicas ?? 1} replicas)`).join(', ')}`;
  ctx.recorder.record(pa, { type: 'Normal', reason: 'Released', action: 'Release', note });
}

/** What is wrong with a spec the API server let through (a CRD schema is not enforced everywhere); undefined when it is fine. */
export function specProblem(pa: PodAutoscaler): string | undefined {
  // What the server sent, not what the type promises: checked field by field.
  const spec: unknown = pa.spec;
  if (spec === undefined || spec === null || typeof spec !== 'object') return 'spec is missing';
  const target = 'targetDeployment' in spec ? spec.targetDeployment : undefined;
  if (typeof target !== 'string' || target === '') {
    return `spec.targetDeployment must be a Deployment name, got ${JSON.stringify(target)}`;
  }
  const replicas = 'replicas' in spec ? spec.replicas : undefined;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0 || replicas > 2 ** 31 - 1) {
    return `spec.replicas must be a whole number from 0, got ${JSON.stringify(replicas)}`;
  }
  return undefined;
}

/**
 * The name of the PodAutoscaler that drives `pa`'s target, of `pa` and the
 * `others` that target the same Deployment: of those that are valid and not
 * being deleted, the oldest, then the first by name. The same answer on
 * every replica and every run, whatever order the cache saw them in.
 */
export function claimant(pa: PodAutoscaler, others: readonly PodAutoscaler[]): string {
  const self = pa.metadata.name as string;
  let holder = pa;
  for (const other of others) {
    if (other.metadata.name === self || other.metadata.deletionTimestamp || specProblem(other) !== undefined) continue;
    if (other.spec.targetDeployment !== pa.spec.targetDeployment || other.metadata.namespace !== pa.metadata.namespace) continue;
    if (older(other, holder)) holder = other;
  }
  return holder.metadata.name as string;
}

function older(a: PodAutoscaler, b: PodAutoscaler): boolean {
  const at = a.metadata.creationTimestamp ?? '';
  const bt = b.metadata.creationTimestamp ?? '';
  if (at !== bt) return at < bt;
  return (a.metadata.name ?? '') < (b.metadata.name ?? '');
}

/** `/metadata/annotations/<key>` as a JSON pointer (RFC 6901 escapes `~` and `/`). */
const stampPath = `/metadata/annotations/${SCALED_BY.replace(/~/g, '~0').replace(/\//g, '~1')}`;

/**
 * Removes the stamp of autoscaler `namespace/name` from every Deployment
 * that carries it in the cache, but `keep`. Each removal is a JSON patch
 * that first tests the stamp still names it: a stamp another autoscaler
 * took over meanwhile is left alone (the test fails with 422, which here
 * means "not ours any more").
 */
async function letGo(namespace: string, name: string, stores: Stores, ctx: ControllerContext<PodAutoscaler>, keep: string | undefined): Promise<Deployment[]> {
  const stamped = stores.deployments.byIndex(BY_SCALER, `${namespace}/${name}`).filter((d) => d.metadata.name !== keep);
  const operations: JsonPatchOperation[] = [
    { op: 'test', path: stampPath, value: name },
    { op: 'remove', path: stampPath },
  ];
  const released: Deployment[] = [];
  for (const deployment of stamped) {
    try {
      released.push(await ctx.client.patchJson(deployment, operations, { signal: ctx.signal }));
    } catch (err) {
      if (!isNotFound(err) && !isInvalid(err)) throw err;
    }
  }
  return released;
}

/**
 * Writes the `Ready` condition, `observedGeneration` and `currentReplicas`
 * when they differ from what the cache holds, and then records the Event of
 * a failing state (only on the change into it, not on every rerun).
 */
async function report(
  pa: PodAutoscaler,
  ctx: ControllerContext<PodAutoscaler>,
  ready: Omit<ConditionUpdate, 'type' | 'observedGeneration'> & { reason: string; message: string },
  currentReplicas: number | undefined,
  eventType?: EventInput['type'],
): Promise<void> {
  const generation = pa.metadata.generation;
  const condition: ConditionUpdate = { type: 'Ready', ...ready, ...(generation !== undefined ? { observedGeneration: generation } : {}) };
  const desired = (base: PodAutoscalerStatus | undefined): PodAutoscalerStatus => {
    const status: PodAutoscalerStatus = {};
    if (generation !== undefined) status.observedGeneration = generation;
    if (currentReplicas !== undefined) status.currentReplicas = currentReplicas;
    status.conditions = setCondition(base?.conditions, condition, clock(ctx));
    return status;
  };
  if (sameStatus(pa.status, desired(pa.status))) return;
  try {
    await ctx.client.updateStatus(
      pa,
      (fresh) => {
        // A namesake created since the cache saw ours gets its own reconcile; leave it be.
        if (fresh.metadata.uid !== pa.metadata.uid) return;
        fresh.status = { ...fresh.status, ...desired(fresh.status) };
        if (currentReplicas === undefined) delete fresh.status.currentReplicas;
      },
      { signal: ctx.signal },
    );
  } catch (err) {
    if (isNotFound(err)) return;
    throw err;
  }
  if (eventType !== undefined) {
    ctx.recorder.record(pa, { type: eventType, reason: ready.reason, action: 'Scale', note: ready.message });
  }
}

/** The controller's clock when it offers one (virtual time in marble tests), else the wall clock. */
function clock(ctx: { readonly key: ObjectKey; now?: () => number }): Date {
  return new Date(ctx.now?.() ?? Date.now());
}

function sameStatus(a: PodAutoscalerStatus | undefined, b: PodAutoscalerStatus): boolean {
  return (
    a !== undefined &&
    a.observedGeneration === b.observedGeneration &&
    a.currentReplicas === b.currentReplicas &&
    a.conditions === b.conditions
  );
}
