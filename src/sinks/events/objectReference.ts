import type { KubeObject } from '../../types.js';

/** `core/v1.ObjectReference`: how Events point at the object they are about. */
export interface ObjectReference {
  /** The object's `apiVersion`. */
  apiVersion?: string;
  /** The object's kind. */
  kind?: string;
  /** The object's name. */
  name: string;
  /** The object's namespace; absent for cluster-scoped objects. */
  namespace?: string;
  /** The object's uid. */
  uid?: string;
  /** The resourceVersion the reference was taken at. */
  resourceVersion?: string;
  /** A part of the object, e.g. `spec.containers{web}`. */
  fieldPath?: string;
}

function isKubeObject(value: KubeObject | ObjectReference): value is KubeObject {
  return typeof (value as KubeObject).metadata === 'object' && (value as KubeObject).metadata !== null;
}

/**
 * The reference to an object, as client-go's `reference.GetReference` makes
 * it (kind, apiVersion, name, namespace, uid, resourceVersion); a reference
 * given as such is copied, keeping only the fields a reference has. Throws
 * when there is no name to point at.
 */
export function objectReference(target: KubeObject | ObjectReference): ObjectReference {
  if (target === null || typeof target !== 'object') {
    throw new TypeError(`expected an object or an object reference, got ${String(target)}`);
  }
  const source: ObjectReference = isKubeObject(target)
    ? {
        apiVersion: target.apiVersion,
        kind: target.kind,
        name: target.metadata.name as string,
        namespace: target.metadata.namespace,
        uid: target.metadata.uid,
        resourceVersion: target.metadata.resourceVersion,
      }
    : target;
  if (typeof source.name !== 'string' || source.name === '') {
    throw new TypeError(`cannot reference ${source.kind ?? 'an object'} without a name`);
  }
  const ref: ObjectReference = { name: source.name };
  for (const field of ['apiVersion', 'kind', 'namespace', 'uid', 'resourceVersion', 'fieldPath'] as const) {
    const value = source[field];
    if (typeof value === 'string' && value !== '') ref[field] = value;
  }
  return ref;
}
