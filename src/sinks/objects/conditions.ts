import { kubeTime } from '../../util/time.js';
/**
 * Status conditions (`metav1.Condition`): the typed, dated flags a
 * controller reports in `status.conditions` ("Ready is True since 10:02").
 * The helpers are pure: they never change the array they are given.
 *
 * The rule that makes conditions useful to readers is that
 * `lastTransitionTime` marks when the *status* last changed, not when the
 * controller last looked: a reconcile that sets `Ready=True` again with a new
 * message keeps the old time (apimachinery's `meta.SetStatusCondition`).
 */

export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** One entry of `status.conditions`. */
export interface Condition {
  /** The condition's name (`Ready`, `Available`), unique in the list. */
  type: string;
  /** `True`, `False` or `Unknown`. */
  status: ConditionStatus;
  /** A CamelCase word for programs ("MinimumReplicasAvailable"). */
  reason?: string;
  /** A sentence for humans. */
  message?: string;
  /** The `metadata.generation` the controller acted on when it set this condition. */
  observedGeneration?: number;
  /** RFC 3339, seconds precision: when `status` last changed. */
  lastTransitionTime?: string;
}

/** What a controller sets; the time is the helper's to manage. */
export type ConditionUpdate = Omit<Condition, 'lastTransitionTime'>;

const statuses: readonly ConditionStatus[] = ['True', 'False', 'Unknown'];

function checkUpdate(update: ConditionUpdate): void {
  if (update === null || typeof update !== 'object') {
    throw new TypeError(`setCondition needs a condition object, got ${String(update)}`);
  }
  if (typeof update.type !== 'string' || update.type === '') {
    throw new TypeError(`a condition needs a non-empty "type", got ${JSON.stringify(update.type)}`);
  }
  if (!statuses.includes(update.status)) {
    throw new TypeError(
      `condition "${update.type}" has status ${JSON.stringify(update.status)}; expected "True", "False" or "Unknown"`,
    );
  }
  if (update.observedGeneration !== undefined && !Number.isInteger(update.observedGeneration)) {
    throw new TypeError(
      `condition "${update.type}" has observedGeneration ${String(update.observedGeneration)}; expected an integer`,
    );
  }
}

function sameFields(a: Condition, b: ConditionUpdate): boolean {
  return (
    a.status === b.status &&
    a.reason === b.reason &&
    a.message === b.message &&
    a.observedGeneration === b.observedGeneration
  );
}

/**
 * Sets the condition of `update.type`: adds it when absent (dated `now`),
 * otherwise replaces its status, reason, message and observedGeneration,
 * moving `lastTransitionTime` to `now` only when the status changed.
 *
 * Returns a new array, or the very array given when nothing changed, so a
 * caller can tell "no write needed" with `===`. Fields left out of `update`
 * (`reason`, `message`, `observedGeneration`) are removed from the condition,
 * as with a whole-struct assignment in Go.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  update: ConditionUpdate,
  now: Date = new Date(),
): Condition[] {
  checkUpdate(update);
  const current = conditions ?? [];
  const index = current.findIndex((c) => c.type === update.type);
  const existing = index === -1 ? undefined : current[index];
  if (existing !== undefined && sameFields(existing, update)) {
    return current as Condition[];
  }
  const lastTransitionTime =
    existing !== undefined && existing.status === update.status && existing.lastTransitionTime !== undefined
      ? existing.lastTransitionTime
      : kubeTime(now);
  const next: Condition = { type: update.type, status: update.status };
  if (update.reason !== undefined) next.reason = update.reason;
  if (update.message !== undefined) next.message = update.message;
  if (update.observedGeneration !== undefined) next.observedGeneration = update.observedGeneration;
  next.lastTransitionTime = lastTransitionTime;
  if (index === -1) return [...current, next];
  const copy = current.slice();
  copy[index] = next;
  return copy;
}

/** Removes the condition of that type; returns the same array when there was none. */
export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  const current = conditions ?? [];
  if (!current.some((c) => c.type === type)) return current as Condition[];
  return current.filter((c) => c.type !== type);
}

/** The condition of that type, if set. */
export function findCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** Whether the condition of that type is set and `True`. */
export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'True';
}

/** Whether the condition of that type is set and `False` (absent is neither true nor false). */
export function isConditionFalse(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === 'False';
}
