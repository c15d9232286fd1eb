import type { KubeObject } from '../../types.js';
import type { CallOptions, JsonPatchOperation, KubeClient } from '../client/kubeClient.js';

/**
 * Reconciles an object that needs cleanup before it may go, by keeping a
 * finalizer of ours on it (kube-runtime's `finalizer`). Given the object as
 * read, it does exactly one of four things:
 *
 * | finalizer | being deleted | does | action |
 * | --- | --- | --- | --- |
 * | missing | no | adds it, and stops: the change brings the object back for `apply` | `added` |
 * | present | no | runs `apply` | `applied` |
 * | present | yes | runs `cleanup`, then removes the finalizer, only if cleanup succeeded | `cleanedUp` |
 * | missing | yes | nothing: our part is done, or was never started | `skipped` |
 *
 * The guarantee: once `apply` has started, the object cannot be gone before
 * `cleanup` has succeeded. Both writes are JSON patches guarded by a `test`
 * operation on the finalizers list, so a concurrent change to it (another
 * controller adding or removing its own finalizer) fails the patch with
 * 422 Invalid instead of clobbering the list or removing someone else's
 * entry; the reconcile then fails, is retried, and sees the new list.
 *
 * Caveats (as kube-runtime's): `apply` and `cleanup` must be idempotent,
 * and `cleanup` must cope with `apply` never having run or finished. The
 * name must be unique to this controller (e.g. `apps.example.com/cleanup`).
 * While the controller is down, or `cleanup` keeps failing, deletes of the
 * object hang: that is the point of a finalizer.
 *
 * Errors: `apply`'s and `cleanup`'s own errors come through as they are;
 * a failed add or remove is a `FinalizerError` saying which, with the
 * server's error as its cause.
 */
export async function finalizer<T extends KubeObject, R>(
  client: KubeClient,
  name: string,
  object: T,
  handlers: FinalizerHandlers<T, R>,
  options: CallOptions = {},
): Promise<FinalizerOutcome<T, R>> {
  switch (finalizerState(object, name)) {
    case 'add': {
      const patched = await patchOrFail<T>(client, object, addFinalizerPatch(object, name), 'add', name, options);
      return { action: 'added', object: patched };
    }
    case 'apply':
      return { action: 'applied', object, result: await handlers.apply(object) };
    case 'cleanup': {
      const result = await handlers.cleanup(object);
      const patched = await patchOrFail<T>(client, object, removeFinalizerPatch(object, name), 'remove', name, options);
      return { action: 'cleanedUp', object: patched, result };
    }
    default:
      return { action: 'skipped', object };
  }
}

/** What `finalizer()` runs: `apply` while the object lives, `cleanup` once it is being deleted. */
export interface FinalizerHandlers<T, R> {
  /** Brings the world in line with the live object. */
  apply(object: T): R | Promise<R>;
  /** Undoes what `apply` made outside the object's owner-reference tree, before the object goes. */
  cleanup(object: T): R | Promise<R>;
}

/** What `finalizer` did, with the object after it (the patched one after a finalizer write). */
export type FinalizerOutcome<T, R> =
  | { action: 'added'; object: T }
  | { action: 'applied'; object: T; result: R }
  | { action: 'cleanedUp'; object: T; result: R }
  | { action: 'skipped'; object: T };

/** Adding or removing the finalizer failed; `cause` is the server's error (a 422 when the list changed meanwhile). */
export class FinalizerError extends Error {
  /** Always `FinalizerError`. */
  override readonly name = 'FinalizerError';

  constructor(
    /** Whether adding (`add`) or removing (`remove`) the finalizer failed. */
    readonly phase: 'add' | 'remove',
    /** The finalizer concerned. */
    readonly finalizerName: string,
    object: KubeObject,
    cause: unknown,
  ) {
    const ns = object.metadata.namespace ? `${object.metadata.namespace}/` : '';
    const why = cause instanceof Error ? cause.message : String(cause);
    super(`failed to ${phase} finalizer "${finalizerName}" ${phase === 'add' ? 'to' : 'from'} ${object.kind ?? 'object'} "${ns}${object.metadata.name ?? ''}": ${why}`, {
      cause,
    });
  }
}

/** Which of the four cases an object is in, for finalizer `name`. */
export function finalizerState(object: KubeObject, name: string): 'add' | 'apply' | 'cleanup' | 'skip' {
  checkName(name);
  const has = object.metadata.finalizers?.includes(name) ?? false;
  const deleting = typeof object.metadata.deletionTimestamp === 'string' && object.metadata.deletionTimestamp !== '';
  if (deleting) return has ? 'cleanup' : 'skip';
  return has ? 'apply' : 'add';
}

/**
 * The JSON patch that adds `name`, guarded by a test that the list is still
 * the one read (a missing list is tested as null and created).
 */
export function addFinalizerPatch(object: KubeObject, name: string): JsonPatchOperation[] {
  const current = object.metadata.finalizers;
  if (current === undefined) {
    return [
      { op: 'test', path: '/metadata/finalizers', value: null },
      { op: 'add', path: '/metadata/finalizers', value: [name] },
    ];
  }
  return [
    { op: 'test', path: '/metadata/finalizers', value: current },
    { op: 'add', path: '/metadata/finalizers/-', value: name },
  ];
}

/** The JSON patch that removes `name` by index, guarded by a test that the index still holds it. */
export function removeFinalizerPatch(object: KubeObject, name: string): JsonPatchOperation[] {
  const index = object.metadata.finalizers?.indexOf(name) ?? -1;
  if (index === -1) throw new Error(`finalizer "${name}" is not on the object; nothing to remove`);
  const path = `/metadata/finalizers/${index}`;
  return [
    { op: 'test', path, value: name },
    { op: 'remove', path },
  ];
}

function checkName(name: string): void {
  if (typeof name !== 'string' || name === '') {
    throw new TypeError(`a finalizer needs a non-empty name (like "example.com/cleanup"), got ${JSON.stringify(name)}`);
  }
}

async function patchOrFail<T extends KubeObject>(
  client: KubeClient,
  object: T,
  operations: JsonPatchOperation[],
  phase: 'add' | 'remove',
  name: string,
  options: CallOptions,
): Promise<T> {
  try {
    return await client.patchJson<T>(object, operations, options);
  } catch (err) {
    if (options.signal?.aborted && err === options.signal.reason) throw err;
    throw new FinalizerError(phase, name, object, err);
  }
}
