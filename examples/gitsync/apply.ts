import { isNotFound, KubeApiError, type ControllerContext, type KubeObject } from 'rxkube';
import { healthOf } from './health.js';
import type { Manifest } from './manifests.js';
import { API_VERSION, INVENTORY_LABEL, KIND, type Application, type ResourceStatus } from './types.js';

/** What applying one manifest did: its line in the status, and whether the cluster changed. */
export interface Applied {
  resource: ResourceStatus;
  /** `created` and `updated` changed the cluster; `unchanged` found it as the manifest says. */
  action: 'created' | 'updated' | 'unchanged' | 'failed';
}

/**
 * Server-side applies one manifest in the Application's namespace, as the
 * controller's field manager, with `force` so that a field changed by hand
 * comes back; labelled with the inventory label and owned by the
 * Application (deleting the Application deletes what it applied). Refused
 * without a write: an unknown or cluster-scoped kind, another namespace,
 * and an existing object that lacks the Application's label (it belongs
 * to someone else). A refusal or a failed write is a `Failed` line, never
 * a throw, so the other manifests still apply; only an aborted reconcile throws.
 */
export async function applyManifest(app: Application, manifest: Manifest, ctx: ControllerContext<Application>): Promise<Applied> {
  const namespace = app.metadata.namespace ?? 'default';
  const { object, file } = manifest;
  const line: ResourceStatus = { apiVersion: object.apiVersion ?? '', kind: object.kind ?? '', namespace, name: object.metadata.name ?? '', file, status: 'Failed', health: 'Missing' };
  const failed = (message: string): Applied => ({ resource: { ...line, message }, action: 'failed' });
  try {
    const info = await ctx.client.resource(line.apiVersion, line.kind, { signal: ctx.signal });
    if (!info.namespaced) return failed(`${line.kind} is cluster-scoped: an Application applies only into its own namespace`);
    if (object.metadata.namespace !== undefined && object.metadata.namespace !== namespace) {
      return failed(`names namespace "${object.metadata.namespace}": an Application applies only into its own namespace "${namespace}"`);
    }
    const live = await ctx.client.get({ apiVersion: line.apiVersion, kind: line.kind, namespace, name: line.name }, { signal: ctx.signal }).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    if (live !== undefined && live.metadata.labels?.[INVENTORY_LABEL] !== app.metadata.name) {
      return failed(`exists and is not this Application's (no ${INVENTORY_LABEL}=${app.metadata.name ?? ''} label): left alone`);
    }
    const applied = await ctx.client.apply(intent(app, object, namespace), { force: true, signal: ctx.signal });
    const action = live === undefined ? 'created' : live.metadata.resourceVersion === applied.metadata.resourceVersion ? 'unchanged' : 'updated';
    return { resource: { ...line, status: 'Synced', health: healthOf(applied) }, action };
  } catch (err) {
    ctx.signal.throwIfAborted();
    if (err instanceof KubeApiError) return failed(err.message);
    if ((err as Error).name === 'UnknownResourceError') return failed(`unknown kind: ${(err as Error).message}`);
    throw err;
  }
}

/** The manifest as this Application applies it: in its namespace, labelled, owned by it. */
function intent(app: Application, object: KubeObject, namespace: string): KubeObject {
  const { resourceVersion: _rv, uid: _uid, managedFields: _mf, creationTimestamp: _ct, ...metadata } = object.metadata;
  const owner = { apiVersion: API_VERSION, kind: KIND, name: app.metadata.name ?? '', uid: app.metadata.uid ?? '', controller: true, blockOwnerDeletion: true };
  return {
    ...object,
    metadata: {
      ...metadata,
      namespace,
      labels: { ...metadata.labels, [INVENTORY_LABEL]: app.metadata.name ?? '' },
      ownerReferences: [...(metadata.ownerReferences ?? []).filter((r) => r.uid !== owner.uid), owner],
    },
  };
}
