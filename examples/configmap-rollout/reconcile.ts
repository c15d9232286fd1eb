import { isNotFound, type ControllerContext, type Lister, type ObjectKey } from 'rxkube';
import { configHash } from './hash.js';
import { configMapUses } from './references.js';
import { CONFIG_HASH, CONFIGMAPS_STORE, type ConfigMap, type Deployment } from './types.js';

/**
 * Stamps a Deployment's pod template with the hash of the ConfigMaps its
 * pods use, so that a change of their data rolls the pods out again.
 *
 * - Idempotent: when the stamp already holds the hash of what the cache
 *   has, it writes nothing; a rerun, a retry or a restart of the controller
 *   restarts no pod.
 * - The write is a merge patch of that one annotation: nothing else of the
 *   Deployment, which this controller neither created nor owns, changes.
 * - A Deployment seen for the first time gets stamped, which rolls it out
 *   once; from then on only changes do.
 * - A required ConfigMap that is missing stamps nothing (a Warning Event
 *   says which): the pods that run keep what they have, and the stamp
 *   follows when it appears.
 * - A Deployment that stops using ConfigMaps keeps its last stamp: removing
 *   it would restart its pods for nothing.
 *
 * It reads `ctx.object` and the ConfigMap store in `ctx.stores`, and writes
 * through `ctx.client` and `ctx.recorder` only.
 */
export async function reconcileRollout(_key: ObjectKey, ctx: ControllerContext<Deployment>): Promise<void> {
  const deployment = ctx.object;
  if (deployment === undefined || deployment.metadata.deletionTimestamp) return;
  const configMaps = ctx.stores[CONFIGMAPS_STORE] as Lister<ConfigMap> | undefined;
  if (configMaps === undefined) {
    throw new Error(`the configmap-rollout reconcile needs the store "${CONFIGMAPS_STORE}" (it has: ${Object.keys(ctx.stores).join(', ') || 'none'})`);
  }
  const uses = configMapUses(deployment);
  if (uses.length === 0) return;
  const namespace = deployment.metadata.namespace ?? '';
  const wanted = configHash(uses, (name) => configMaps.get(`${namespace}/${name}`));
  if (wanted.missing !== undefined) {
    ctx.recorder.record(deployment, {
      type: 'Warning',
      reason: 'ConfigMapNotFound',
      action: 'Restart',
      note: `waiting for configmap ${wanted.missing.map((n) => `"${n}"`).join(', ')} before stamping the config hash`,
    });
    return;
  }
  const current = deployment.spec?.template?.metadata?.annotations?.[CONFIG_HASH];
  if (current === wanted.hash) return;
  try {
    await ctx.client.patchMerge(deployment, { spec: { template: { metadata: { annotations: { [CONFIG_HASH]: wanted.hash } } } } }, { signal: ctx.signal });
  } catch (err) {
    // Gone since the cache saw it: nothing to restart.
    if (isNotFound(err)) return;
    throw err;
  }
  const names = uses.map((u) => `"${u.name}"`).join(', ');
  ctx.recorder.record(deployment, {
    type: 'Normal',
    reason: current === undefined ? 'ConfigHashStamped' : 'ConfigChanged',
    action: 'Restart',
    note: current === undefined ? `stamped the hash of configmap ${names}` : `configmap ${names} changed: rolling out the pods`,
  });
}
