import { ApiError, conflict, notFound, statusFor } from '../../apiserver/api/statusError.js';
import type { ResourceType } from '../../apiserver/api/resourceType.js';

/** What a request to the memory client does, as the API server's audit log names it. */
export type MemoryVerb = 'get' | 'create' | 'update' | 'patch' | 'apply' | 'delete';

/** The verbs that change something. */
export const writeVerbs: readonly MemoryVerb[] = ['create', 'update', 'patch', 'apply', 'delete'];

/**
 * An error the memory client answers instead of doing a request, as a real
 * server might: a 409 Conflict to exercise a retry, a 500, a 429 with
 * `retryAfterSeconds` (which the client then waits out and resends, as the
 * real transport does).
 */
export interface Fault {
  /** The HTTP status code (409, 500, 429, …). */
  code: number;
  /** The Status reason; default kube's for the code (`Conflict`, `InternalError`, …). */
  reason?: string;
  /** Default: kube's wording for the code (a 409 reads like a stale-resourceVersion conflict). */
  message?: string;
  retryAfterSeconds?: number;
  /** Which requests it hits; default every write. Name `'get'` to fail reads. */
  verbs?: readonly MemoryVerb[];
  /** Only requests for this kind (`Deployment`). */
  kind?: string;
  /** Only requests for this object name. */
  name?: string;
  namespace?: string;
  /** Only requests to (`'status'`) or not to (`''`) the status subresource. */
  subresource?: 'status' | '';
}

/** A request, as far as a fault looks at it. */
export interface FaultTarget {
  verb: MemoryVerb;
  type: ResourceType;
  name: string;
  namespace: string | undefined;
  subresource: 'status' | undefined;
}

interface Rule {
  fault: Fault;
  left: number;
}

/** Faults waiting to be answered, in the order they were added. */
export class FaultQueue {
  private readonly rules: Rule[] = [];

  add(count: number, fault: Fault): void {
    if (!Number.isInteger(count) || count < 1) throw new RangeError(`failNext needs a count of at least 1, got ${String(count)}`);
    if (fault === null || typeof fault !== 'object' || !Number.isInteger(fault.code) || fault.code < 400 || fault.code > 599) {
      throw new RangeError(`a fault needs an HTTP error code from 400 to 599, got ${JSON.stringify(fault?.code)}`);
    }
    this.rules.push({ fault, left: count });
  }

  /** Faults not yet used up. */
  pending(): number {
    return this.rules.reduce((n, r) => n + r.left, 0);
  }

  /** The error for this request, if a fault takes it (and counts it). */
  take(target: FaultTarget): ApiError | undefined {
    const rule = this.rules.find((r) => r.left > 0 && hits(r.fault, target));
    if (rule === undefined) return undefined;
    rule.left -= 1;
    return errorFor(rule.fault, target);
  }
}

function hits(fault: Fault, t: FaultTarget): boolean {
  if (!(fault.verbs ?? writeVerbs).includes(t.verb)) return false;
  if (fault.kind !== undefined && fault.kind !== t.type.kind) return false;
  if (fault.name !== undefined && fault.name !== t.name) return false;
  if (fault.namespace !== undefined && fault.namespace !== t.namespace) return false;
  if (fault.subresource !== undefined && fault.subresource !== (t.subresource ?? '')) return false;
  return true;
}

function errorFor(fault: Fault, t: FaultTarget): ApiError {
  const gr = { group: t.type.group, resource: t.type.resource };
  const plain = fault.reason === undefined && fault.message === undefined && fault.retryAfterSeconds === undefined;
  if (plain && fault.code === 409) return conflict(gr, t.name);
  if (plain && fault.code === 404) return notFound(gr, t.name);
  return statusFor(fault.code, {
    ...(fault.reason !== undefined ? { reason: fault.reason } : {}),
    ...(fault.message !== undefined ? { message: fault.message } : {}),
    ...(fault.retryAfterSeconds !== undefined ? { retryAfterSeconds: fault.retryAfterSeconds } : {}),
    details: { name: t.name, ...(t.type.group !== '' ? { group: t.type.group } : {}), kind: t.type.resource },
  });
}
