import type { KubeObject } from '../types.js';
import type { FailedResponse } from './http.js';
import { ListWatchError, explainStatus, isFatalStatus } from './listWatchError.js';
import { describeResource, resourceName, type ResourceRef } from '../types.js';

/**
 * The `ListWatchError`s that end a list-watch, each with the message it has
 * always had: a status no retry can fix, a kubeconfig without a server, a
 * transform that threw. Each is returned, never thrown: the phase that met it
 * becomes `failed`, and the source errors with it.
 */

/** The error a fatal status means (400 with the selectors quoted, 401, 403, 404 …); `undefined` for a status worth retrying. */
export function fatalStatusError(
  failure: FailedResponse,
  verb: 'list' | 'watch',
  resource: ResourceRef,
  selectors: { labelSelector?: string | undefined; fieldSelector?: string | undefined; shardSelector?: string | undefined },
): ListWatchError | undefined {
  if (!isFatalStatus(failure.code)) return undefined;
  const quoted = [
    selectors.labelSelector ? `labelSelector "${selectors.labelSelector}"` : '',
    selectors.fieldSelector ? `fieldSelector "${selectors.fieldSelector}"` : '',
    selectors.shardSelector ? `shardSelector "${selectors.shardSelector}"` : '',
  ].filter(Boolean);
  return new ListWatchError(
    `cannot ${verb} ${describeResource(resource)}${quoted.length ? ` with ${quoted.join(' and ')}` : ''}: ` +
      `${explainStatus(failure.code)} (${failure.code} ${failure.reason}: ${failure.message})`,
    failure.code,
    failure.reason,
    verb,
    resourceName(resource),
  );
}

/** A kubeconfig that names no server: `message` is what was missing. */
export function kubeConfigError(message: string, verb: 'list' | 'watch', resource: ResourceRef): ListWatchError {
  return new ListWatchError(`cannot ${verb} ${describeResource(resource)}: ${message}`, 0, 'BadKubeConfig', verb, resourceName(resource));
}

/** The user's `transform` threw `err` for `object`. */
export function transformError(object: KubeObject, err: unknown, resource: string, verb: 'list' | 'watch'): ListWatchError {
  const meta = object.metadata ?? {};
  const error = new ListWatchError(
    `the transform of ${resource} threw for ${meta.namespace ? `${meta.namespace}/` : ''}${meta.name ?? '(no name)'}: ${describeError(err)}`,
    0,
    'TransformFailed',
    verb,
    resource,
  );
  error.cause = err;
  return error;
}

/** An error's message, with its `code` (`ECONNRESET`) when it has one. */
export function describeError(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' ? `${err.message} (${code})` : err.message;
  }
  return String(err);
}
