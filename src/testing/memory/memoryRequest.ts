import type { KubeApiError } from '../../sinks/client/errors.js';
import type { ObjectKey } from '../../types.js';

/** What a request to the memory client does, as the client names it (`apply` is a server-side apply patch). */
export type MemoryVerb = 'get' | 'list' | 'create' | 'update' | 'patch' | 'apply' | 'delete';

/** The verbs that change something. */
export const writeVerbs: readonly MemoryVerb[] = ['create', 'update', 'patch', 'apply', 'delete'];

/** One request the memory client served (or refused), as a test reads it back. */
export interface MemoryRequest {
  /** When it was answered, on the client's scheduler (virtual ms in a marble test). */
  at: number;
  /** What the request did (`get`, `list`, `create`, `update`, `patch`, `apply`, `delete`). */
  verb: MemoryVerb;
  /** `status` for a request to the status subresource. */
  subresource?: 'status';
  /** For `patch`: RFC 7396 merge patch or RFC 6902 JSON patch. */
  patchType?: 'merge' | 'json';
  /** The target's `apiVersion`. */
  apiVersion: string;
  /** The target's kind. */
  kind: string;
  /** The resource as kube names it in messages: `deployments.apps`, `configmaps`. */
  resource: string;
  /** The namespace; absent for cluster-scoped objects and lists across namespaces. */
  namespace?: string;
  /** The object's name; '' for a `list`. */
  name: string;
  /** `namespace/name`, or `name` when cluster-scoped: the object's store key (for a `list`, the namespace or ''). */
  key: ObjectKey;
  /** The field manager of a write. */
  fieldManager?: string;
  /** What was sent: the object, the patch, or the delete options; a copy. */
  body?: unknown;
  /** 200 or 201 when it succeeded; else the error's HTTP code. */
  code: number;
  /** The error it failed with (a `KubeApiError`, as from a real server). */
  error?: KubeApiError;
  /** The failure was injected with `faults.failNext`, not the cluster's answer. */
  injected?: boolean;
  /** The object's resourceVersion after a successful request. */
  resourceVersion?: string;
}

/**
 * A request in one line, the form a string among the expected values of
 * `expectWrites` is compared with: `update deployments.apps default/web`,
 * `patch/status podautoscalers.example.com default/web`, and for a failure
 * its code and reason: `update deployments.apps default/web 409 Conflict`.
 */
export function describeRequest(r: MemoryRequest): string {
  const verb = r.subresource ? `${r.verb}/${r.subresource}` : r.verb;
  const failed = r.code >= 400 ? ` ${r.code} ${r.error?.reason ?? ''}`.trimEnd() : '';
  return `${verb} ${r.resource} ${r.key}${failed}`;
}

/** The one-line form plus what was sent, for failure messages. */
export function describeRequestFully(r: MemoryRequest): string {
  const body = r.body === undefined ? '' : ` ${JSON.stringify(r.body)}`;
  const shown = body.length > 300 ? `${body.slice(0, 300)}…` : body;
  return `${describeRequest(r)}${r.injected ? ' (injected)' : ''}${shown}`;
}
