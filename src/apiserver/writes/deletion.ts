import type { KubeObject } from '../../types.js';
import { cloneJson, jsonEqual } from '../../util/json.js';
import type { ResourceType } from '../api/resourceType.js';
import { conflict, invalid } from '../api/statusError.js';

/**
 * What a DELETE does to an object, as kube's registry decides it: check the
 * preconditions, turn the propagation policy into the garbage collector's
 * finalizers, then either remove the object at once or mark it with
 * `deletionTimestamp` while finalizers remain.
 */

export type PropagationPolicy = 'Foreground' | 'Background' | 'Orphan';

export interface DeleteOptions {
  propagationPolicy?: PropagationPolicy;
  orphanDependents?: boolean;
  preconditions?: { uid?: string; resourceVersion?: string };
  dryRun?: boolean;
}

export const foregroundFinalizer = 'foregroundDeletion';
export const orphanFinalizer = 'orphan';
export const crdCleanupFinalizer = 'customresourcecleanup.apiextensions.k8s.io';

export interface DeletionPlan {
  /** The object marked for deletion, or undefined when it is removed now. */
  pending: KubeObject | undefined;
  /** True when the object was already marked exactly so (a repeated DELETE). */
  unchanged: boolean;
}

const policies: readonly PropagationPolicy[] = ['Foreground', 'Background', 'Orphan'];

/** Reads DeleteOptions from a request body and query, checking the policy's value. */
export function parseDeleteOptions(body: unknown, query: URLSearchParams): DeleteOptions {
  const fromBody = (body !== null && typeof body === 'object' ? body : {}) as Record<string, unknown>;
  const options: DeleteOptions = {};
  const policy = query.get('propagationPolicy') ?? fromBody.propagationPolicy;
  if (policy !== undefined && policy !== null) {
    if (!policies.includes(policy as PropagationPolicy)) {
      throw invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', [
        {
          field: 'propagationPolicy',
          type: 'Unsupported value',
          detail: `${JSON.stringify(policy)}: supported values: "Foreground", "Background", "Orphan"`,
        },
      ]);
    }
    options.propagationPolicy = policy as PropagationPolicy;
  }
  const orphan = query.get('orphanDependents') ?? fromBody.orphanDependents;
  if (orphan !== undefined && orphan !== null) options.orphanDependents = orphan === true || orphan === 'true';
  if (options.propagationPolicy !== undefined && options.orphanDependents !== undefined) {
    throw invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', [
      { field: 'propagationPolicy', type: 'Invalid value', value: options.propagationPolicy, detail: 'orphanDependents and deletionPropagation cannot be both set' },
    ]);
  }
  const pre = fromBody.preconditions;
  if (pre !== null && typeof pre === 'object') {
    const { uid, resourceVersion } = pre as Record<string, unknown>;
    options.preconditions = {};
    if (typeof uid === 'string') options.preconditions.uid = uid;
    if (typeof resourceVersion === 'string') options.preconditions.resourceVersion = resourceVersion;
  }
  const dryRun = query.getAll('dryRun');
  const bodyDryRun = fromBody.dryRun;
  if (dryRun.includes('All') || (Array.isArray(bodyDryRun) && bodyDryRun.includes('All'))) options.dryRun = true;
  return options;
}

function withFinalizer(list: string[], add: string | undefined, remove: string | undefined): string[] {
  const out = list.filter((f) => f !== remove);
  if (add !== undefined && !out.includes(add)) out.push(add);
  return out;
}

export function deletionPlan(type: ResourceType, live: KubeObject, options: DeleteOptions, now: string): DeletionPlan {
  const name = live.metadata.name as string;
  const gr = { group: type.group, resource: type.resource };
  const pre = options.preconditions;
  if (pre?.uid !== undefined && pre.uid !== live.metadata.uid) {
    throw conflict(gr, name, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${live.metadata.uid ?? ''}`);
  }
  if (pre?.resourceVersion !== undefined && pre.resourceVersion !== live.metadata.resourceVersion) {
    throw conflict(
      gr,
      name,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${live.metadata.resourceVersion ?? ''}`,
    );
  }
  const policy = options.propagationPolicy ?? (options.orphanDependents === true ? 'Orphan' : undefined);
  const next = cloneJson(live) as KubeObject;
  const meta = next.metadata;
  let finalizers = [...(meta.finalizers ?? [])];
  if (policy === 'Foreground') finalizers = withFinalizer(finalizers, foregroundFinalizer, orphanFinalizer);
  else if (policy === 'Orphan') finalizers = withFinalizer(finalizers, orphanFinalizer, foregroundFinalizer);
  else if (policy === 'Background') finalizers = finalizers.filter((f) => f !== orphanFinalizer && f !== foregroundFinalizer);
  if (type.builtin && type.group === 'apiextensions.k8s.io') finalizers = withFinalizer(finalizers, crdCleanupFinalizer, undefined);
  const namespaceFinalizers = type.builtin && type.group === '' && type.resource === 'namespaces'
    ? ((next as unknown as { spec?: { finalizers?: string[] } }).spec?.finalizers ?? [])
    : [];
  if (finalizers.length === 0 && namespaceFinalizers.length === 0) return { pending: undefined, unchanged: false };
  if (finalizers.length > 0) meta.finalizers = finalizers;
  else delete meta.finalizers;
  if (meta.deletionTimestamp === undefined) {
    meta.deletionTimestamp = now;
    meta.deletionGracePeriodSeconds = 0;
    // kube bumps generation when deletion starts, on objects that have one.
    if (meta.generation !== undefined && meta.generation > 0) meta.generation += 1;
  }
  if (namespaceFinalizers.length > 0) {
    (next as unknown as { status?: Record<string, unknown> }).status = {
      ...((next as unknown as { status?: Record<string, unknown> }).status ?? {}),
      phase: 'Terminating',
    };
  }
  return { pending: next, unchanged: jsonEqual(next, live) };
}
