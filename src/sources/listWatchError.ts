/**
 * A fault no retry can fix: the source ends with it. `code` and `reason`
 * are the API server's (403 Forbidden, 404 NotFound, 400 BadRequest ...);
 * the message names the verb and the resource.
 */
export class ListWatchError extends Error {
  /** Always `ListWatchError`. */
  override readonly name = 'ListWatchError';
  constructor(
    message: string,
    /** The HTTP status code (403, 404, ...); 0 for a failure without a response (a bad kubeconfig, a transform that threw). */
    readonly code: number,
    /** The Status reason (`Forbidden`, `NotFound`), or rxkube's (`BadKubeConfig`, `TransformFailed`). */
    readonly reason: string,
    /** Whether the list or the watch met it. */
    readonly verb: 'list' | 'watch',
    /** The resource, as kube names it in messages (`deployments.apps`). */
    readonly resource: string,
  ) {
    super(message);
  }
}

/**
 * Status codes that say the request itself is wrong, so the same request
 * will fail the same way however often it is retried. 401 and 403 are not
 * among them: RBAC granted after start and a rotated token fix them, so the
 * source retries them with backoff, as client-go and kube-rs do.
 */
const FATAL = new Set([400, 404, 405, 406, 415, 422]);

export function isFatalStatus(code: number): boolean {
  return FATAL.has(code);
}

/** Why a fatal status happened, in words a controller author can act on. */
export function explainStatus(code: number): string {
  switch (code) {
    case 401:
      return 'the API server refused the credentials in the kubeconfig';
    case 403:
      return 'the identity in the kubeconfig is not allowed to do this (check its RBAC rules)';
    case 404:
      return 'the API server does not serve this resource type (check group, version and plural, and that its CRD is installed)';
    case 400:
      return 'the API server rejected the request (check the label and field selectors)';
    default:
      return 'the API server rejected the request';
  }
}
