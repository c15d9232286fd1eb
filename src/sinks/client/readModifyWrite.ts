import { cloneJson, jsonEqual } from '../../util/json.js';
import type { KubeObject } from '../../types.js';
import type { ObjectRef, ObjectTarget } from './kubeClient.js';
import { isAlreadyExists, isNotFound, KubeApiError } from './errors.js';

/**
 * The read-mutate-write steps of `createOrUpdate` and `updateStatus`, apart
 * from how a client reaches the server, so that the HTTP client and the
 * in-memory test client (`rxkube/testing`) behave alike by construction.
 * Each function here is one attempt; the caller wraps it in
 * `retryOnConflict`, which calls it again after a 409.
 */

/** Changes a copy of the object; may return a replacement instead of changing it in place. */
export type Mutate<T> = (object: T) => T | void | Promise<T | void>;

/** What a write did: `unchanged` means no write was needed, or the server kept the resourceVersion. */
export interface WriteResult<T> {
  /** `created`, `updated`, or `unchanged` when nothing needed writing. */
  result: 'created' | 'updated' | 'unchanged';
  /** The object as the server holds it after the call. */
  object: T;
}

/** `mutate` changed what identifies the object. */
export class MutateIdentityError extends Error {
  override readonly name = 'MutateIdentityError';
}

/** A target without the fields needed to address it. */
export class InvalidTargetError extends Error {
  override readonly name = 'InvalidTargetError';
}

/** The reference an object or a reference names. */
export function toRef(target: ObjectTarget): ObjectRef {
  if (target === null || typeof target !== 'object') {
    throw new InvalidTargetError(`expected an object or an { apiVersion, kind, name, namespace? } reference, got ${String(target)}`);
  }
  if ('metadata' in target && target.metadata !== null && typeof target.metadata === 'object') {
    const { apiVersion, kind, metadata } = target;
    return { apiVersion: apiVersion as string, kind: kind as string, name: metadata.name as string, namespace: metadata.namespace };
  }
  return target as ObjectRef;
}

/** How one client reads and writes: the server calls these steps are made of. */
export interface WriteSteps {
  get<T extends KubeObject>(object: T): Promise<T>;
  create<T extends KubeObject>(object: T): Promise<T>;
  put<T extends KubeObject>(object: T, subresource?: 'status'): Promise<T>;
}

/** Whether the server kept the resourceVersion it was sent: a write that changed nothing. */
function sameVersion(sent: KubeObject, got: KubeObject): boolean {
  return sent.metadata.resourceVersion !== undefined && sent.metadata.resourceVersion === got.metadata?.resourceVersion;
}

/** Runs `mutate` on a copy of `base`, and refuses a result that lost its metadata or changed its name or namespace. */
export async function mutated<T extends KubeObject>(base: T, mutate: Mutate<T>, what: string): Promise<T> {
  const copy = cloneJson(base);
  const result = await mutate(copy);
  const next = result === undefined ? copy : result;
  if (next === null || typeof next !== 'object' || next.metadata === null || typeof next.metadata !== 'object') {
    throw new MutateIdentityError(`${what}: mutate left no object with metadata`);
  }
  if (next.metadata.name !== base.metadata.name || (next.metadata.namespace ?? '') !== (base.metadata.namespace ?? '')) {
    throw new MutateIdentityError(
      `${what}: mutate must not change the name or namespace ` +
        `(${base.metadata.namespace ?? ''}/${base.metadata.name ?? ''} became ${next.metadata.namespace ?? ''}/${next.metadata.name ?? ''})`,
    );
  }
  return next;
}

/**
 * One attempt of controller-runtime's `CreateOrUpdate`: read; if missing,
 * create the mutated `object`; else write the mutated stored object only if
 * it differs. A create that lost a race (AlreadyExists) is turned into a 409
 * Conflict, so the retry reads again and updates.
 */
export async function createOrUpdateOnce<T extends KubeObject>(steps: WriteSteps, object: T, mutate: Mutate<T>, what: string): Promise<WriteResult<T>> {
  let current: T;
  try {
    current = await steps.get(object);
  } catch (err) {
    if (!isNotFound(err)) throw err;
    const desired = await mutated(object, mutate, what);
    try {
      return { result: 'created', object: await steps.create(desired) };
    } catch (createErr) {
      if (isAlreadyExists(createErr) && createErr instanceof KubeApiError) {
        throw new KubeApiError(createErr.request, { code: 409, reason: 'Conflict', message: createErr.serverMessage, cause: createErr });
      }
      throw createErr;
    }
  }
  const next = await mutated(current, mutate, what);
  if (jsonEqual(current, next)) return { result: 'unchanged', object: current };
  const written = await steps.put(next);
  return { result: sameVersion(current, written) ? 'unchanged' : 'updated', object: written };
}

/**
 * Attempt `attempt` (0 first) of `updateStatus`. With `mutate`: read, mutate
 * a copy, write only if the status changed. Without: write `object.status`,
 * first from `object` itself (guarded by its resourceVersion), then, after a
 * conflict, onto a fresh read.
 */
export async function updateStatusOnce<T extends KubeObject>(
  steps: WriteSteps,
  object: T,
  mutate: Mutate<T> | undefined,
  what: string,
  attempt: number,
): Promise<WriteResult<T>> {
  let base: T;
  let next: T;
  if (attempt === 0 && mutate === undefined && object.metadata.resourceVersion !== undefined) {
    base = object;
    next = object;
  } else {
    const withStatus: Mutate<T> =
      mutate ??
      ((current) => {
        (current as { status?: unknown }).status = cloneJson((object as { status?: unknown }).status);
      });
    base = await steps.get(object);
    next = await mutated(base, withStatus, what);
    if (jsonEqual(base, next)) return { result: 'unchanged', object: base };
  }
  const written = await steps.put(next, 'status');
  return { result: sameVersion(base, written) ? 'unchanged' : 'updated', object: written };
}
