/**
 * A patch or apply request that kube-apiserver would refuse, with the HTTP status (`code`) and
 * Status `reason` it answers with: 400 `BadRequest` for a body that is not a patch of the right
 * shape, 415 `UnsupportedMediaType` for a patch type the resource does not accept, 422 `Invalid`
 * for a well-formed patch that does not apply, 413 `RequestEntityTooLarge` for an oversized JSON
 * patch, 500 `InternalError` where kube itself fails (e.g. a merge list item without its key).
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

  static internal(message: string): PatchError {
    return new PatchError(500, 'InternalError', `an error on the server (${JSON.stringify(message)}) has prevented the request from succeeding`);
  }
}
