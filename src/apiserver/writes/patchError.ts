/**
 * A patch or apply request that kube-apiserver would refuse, with the HTTP status (`code`) and
 * Status `reason` it answers with: 400 `BadRequest` for a body that is not a patch of the right
 * shape, 415 `UnsupportedMediaType` for a patch type the resource does not accept, 422 `Invalid`
 * for a well-formed patch that does not apply, 413 `RequestEntityTooLarge` for an oversized JSON
 * patch, and 422 `Invalid` for a strategic merge patch or apply whose body does not fit the
 * kind's structure (a merge-list item without its key, mixed list item types).
 *
 * That last case is where this server departs from kube-apiserver 1.32 on purpose: kube answers
 * it with 500 InternalError (kubernetes/kubernetes#122480, #79210: a known bug, still open), but
 * the request is the client's mistake, and a 5xx would tell a client to retry something that can
 * never succeed. The message stays kube's.
 */
export class PatchError extends Error {
  override readonly name = 'PatchError';

  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }

  static badRequest(message: string): PatchError {
    return new PatchError(400, 'BadRequest', message);
  }

  static invalid(message: string): PatchError {
    return new PatchError(422, 'Invalid', message);
  }

  /** A body that does not fit the kind's structure: kube's 500 InternalError, answered as the client's 422. */
  static unfit(message: string): PatchError {
    return new PatchError(422, 'Invalid', message);
  }
}
