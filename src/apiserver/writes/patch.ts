import { shapeFor } from '../api/builtinSchema.js';
import type { GroupKind } from '../api/groupKind.js';
import { applyJsonPatch } from './jsonPatch.js';
import { goTypeName, isJsonObject, jsonKind, type JsonObject } from './jsonValue.js';
import { applyMergePatch7396 } from './mergePatch.js';
import { PatchError } from './patchError.js';
import { strategicMergePatch } from './strategicMerge.js';

export { PatchError } from './patchError.js';

export const jsonPatchType = 'application/json-patch+json';
export const mergePatchType = 'application/merge-patch+json';
export const strategicMergePatchType = 'application/strategic-merge-patch+json';
export const applyPatchType = 'application/apply-patch+yaml';

/** The patch media types kube accepts for a resource, in kube's order (its 415 message lists them). */
export function acceptedPatchTypes(builtin: boolean): readonly string[] {
  return builtin
    ? [jsonPatchType, mergePatchType, strategicMergePatchType, applyPatchType]
    : [jsonPatchType, mergePatchType, applyPatchType];
}

export interface PatchOptions {
  readonly kind: GroupKind;
  /** Built-in kinds accept strategic merge patches; custom resources do not (415). */
  readonly builtin: boolean;
}

/**
 * Applies a PATCH request's body to the live object, dispatching on its Content-Type (anything
 * after `;`, such as a charset, is ignored, as kube does):
 * - `application/merge-patch+json`: RFC 7396 ({@link applyMergePatch7396});
 * - `application/json-patch+json`: RFC 6902 ({@link applyJsonPatch});
 * - `application/strategic-merge-patch+json`: built-ins only ({@link strategicMergePatch});
 * - anything else, and strategic merge for custom resources: 415 UnsupportedMediaType listing
 *   the accepted types. Apply patches (`application/apply-patch+yaml`) are server-side apply,
 *   which `serverSideApply` does; they are refused here the same way.
 *
 * The result must still be a JSON object (else 422 Invalid). Throws only {@link PatchError};
 * never modifies `live` or `body`.
 */
export function applyPatch(contentType: string, live: object, body: unknown, options: PatchOptions): object {
  const semicolon = contentType.indexOf(';');
  const type = semicolon > 0 ? contentType.slice(0, semicolon) : contentType;
  const doc = live as JsonObject;
  let result: unknown;
  switch (type) {
    case mergePatchType:
      result = applyMergePatch7396(doc, body);
      break;
    case jsonPatchType:
      result = applyJsonPatch(doc, body);
      break;
    case strategicMergePatchType:
      if (!options.builtin) throw unsupportedMediaType(options.builtin);
      // A JSON null decodes to an empty patch in kube.
      if (body === null) body = {};
      if (!isJsonObject(body)) {
        throw PatchError.badRequest(`json: cannot unmarshal ${jsonKind(body)} into Go value of type map[string]interface {}`);
      }
      result = strategicMergePatch(doc, body as JsonObject, shapeFor(options.kind));
      break;
    default:
      throw unsupportedMediaType(options.builtin);
  }
  if (!isJsonObject(result)) {
    throw PatchError.invalid(`patch: Invalid value: the patched object is a ${goTypeName(result)}, not a JSON object`);
  }
  return result;
}

function unsupportedMediaType(builtin: boolean): PatchError {
  return new PatchError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${acceptedPatchTypes(builtin).join(', ')}`,
  );
}
