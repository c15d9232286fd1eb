import type { KubeObject, OwnerReference } from '../../types.js';

/**
 * Owner references tie an object to the one that made it: the garbage
 * collector deletes the owned object when its owner goes, and an `owns`
 * watch maps changes of the owned object back to the owner's key. At most
 * one owner is *the controller* (`controller: true`): the one that manages
 * the object. These helpers follow controller-runtime's `controllerutil`
 * rules:
 *
 * - an object has at most one controller; setting a second one is refused
 *   with `AlreadyOwnedError`, naming the one it has;
 * - a namespaced owner can only own objects in its own namespace, never a
 *   cluster-scoped object (the garbage collector would treat the reference
 *   as dangling and delete the object); a cluster-scoped owner can own anything;
 * - two references point to the same owner when group, kind and name agree
 *   (the version may differ: the same object read through another version
 *   is still the same owner), so setting the reference again updates it in
 *   place instead of adding a second one.
 */

/** The object already has a controller, and it is not the owner being set. */
export class AlreadyOwnedError extends Error {
  override readonly name = 'AlreadyOwnedError';

  constructor(
    readonly object: KubeObject,
    readonly existing: OwnerReference,
  ) {
    super(
      `${describe(object)} is already controlled by ` +
        `${existing.kind} "${existing.name}" (apiVersion ${existing.apiVersion}, uid ${existing.uid})`,
    );
  }
}

/** An owner reference that cannot be set: a missing owner field, or namespaces that do not allow it. */
export class OwnerReferenceError extends Error {
  override readonly name = 'OwnerReferenceError';
}

function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash === -1 ? '' : apiVersion.slice(0, slash);
}

/** Whether two references name the same owner: same group, kind and name. */
export function referSameObject(a: OwnerReference, b: OwnerReference): boolean {
  return groupOf(a.apiVersion) === groupOf(b.apiVersion) && a.kind === b.kind && a.name === b.name;
}

function describe(obj: KubeObject): string {
  const ns = obj.metadata?.namespace ? `${obj.metadata.namespace}/` : '';
  return `${obj.kind ?? 'object'} "${ns}${obj.metadata?.name ?? ''}"`;
}

/** The reference to `owner`; refuses an owner without the fields a reference needs. */
export function ownerReferenceFor(owner: KubeObject, options: { controller?: boolean; blockOwnerDeletion?: boolean } = {}): OwnerReference {
  const missing: string[] = [];
  if (typeof owner?.apiVersion !== 'string' || owner.apiVersion === '') missing.push('apiVersion');
  if (typeof owner?.kind !== 'string' || owner.kind === '') missing.push('kind');
  if (typeof owner?.metadata?.name !== 'string' || owner.metadata.name === '') missing.push('metadata.name');
  if (typeof owner?.metadata?.uid !== 'string' || owner.metadata.uid === '') missing.push('metadata.uid');
  if (missing.length > 0) {
    throw new OwnerReferenceError(
      `cannot reference owner ${owner ? describe(owner) : String(owner)}: it has no ${missing.join(', ')} ` +
        `(use the object as read from the API server, which carries them)`,
    );
  }
  const ref: OwnerReference = {
    apiVersion: owner.apiVersion as string,
    kind: owner.kind as string,
    name: owner.metadata.name as string,
    uid: owner.metadata.uid as string,
  };
  if (options.controller !== undefined) ref.controller = options.controller;
  if (options.blockOwnerDeletion !== undefined) ref.blockOwnerDeletion = options.blockOwnerDeletion;
  return ref;
}

function validateNamespaces(owner: KubeObject, obj: KubeObject): void {
  const ownerNs = owner.metadata.namespace;
  if (ownerNs === undefined || ownerNs === '') return;
  const objNs = obj.metadata?.namespace;
  if (objNs === undefined || objNs === '') {
    throw new OwnerReferenceError(
      `cluster-scoped ${describe(obj)} cannot have namespaced owner ${describe(owner)}`,
    );
  }
  if (objNs !== ownerNs) {
    throw new OwnerReferenceError(
      `${describe(obj)} cannot be owned by ${describe(owner)}: cross-namespace owner references are not allowed`,
    );
  }
}

function withReference<T extends KubeObject>(obj: T, ref: OwnerReference): T {
  const refs = obj.metadata.ownerReferences ?? [];
  const index = refs.findIndex((r) => referSameObject(r, ref));
  const next = index === -1 ? [...refs, ref] : refs.map((r, i) => (i === index ? ref : r));
  return { ...obj, metadata: { ...obj.metadata, ownerReferences: next } };
}

/**
 * Returns a copy of `obj` whose owner references make `owner` its
 * controller (`controller: true`, `blockOwnerDeletion` as given, default
 * true, so a foreground delete of the owner waits for it). An existing
 * reference to the same owner is replaced; other owners are kept. `obj` is
 * not changed. Throws `AlreadyOwnedError` when another controller is set,
 * and `OwnerReferenceError` when the namespaces do not allow the reference.
 */
export function setControllerReference<T extends KubeObject>(
  owner: KubeObject,
  obj: T,
  options: { blockOwnerDeletion?: boolean } = {},
): T {
  const ref = ownerReferenceFor(owner, { controller: true, blockOwnerDeletion: options.blockOwnerDeletion ?? true });
  validateNamespaces(owner, obj);
  const existing = getControllerOf(obj);
  if (existing !== undefined && !referSameObject(existing, ref)) {
    throw new AlreadyOwnedError(obj, existing);
  }
  return withReference(obj, ref);
}

/**
 * Returns a copy of `obj` with `owner` among its owners, not as controller
 * (controller-runtime's `SetOwnerReference`): the garbage collector still
 * deletes `obj` with its owner. Same namespace rules as `setControllerReference`.
 */
export function setOwnerReference<T extends KubeObject>(owner: KubeObject, obj: T): T {
  const ref = ownerReferenceFor(owner);
  validateNamespaces(owner, obj);
  return withReference(obj, ref);
}

/** The controller reference of `obj`, if it has one. */
export function getControllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata?.ownerReferences?.find((r) => r.controller === true);
}

/** Whether `obj` has a controller reference (to anyone). */
export function hasControllerReference(obj: KubeObject): boolean {
  return getControllerOf(obj) !== undefined;
}

/** Whether `owner` is the controller of `obj`, by uid (the same object, not a namesake recreated since). */
export function isControlledBy(obj: KubeObject, owner: KubeObject): boolean {
  const ref = getControllerOf(obj);
  return ref !== undefined && owner.metadata?.uid !== undefined && ref.uid === owner.metadata.uid;
}
