import { cloneJson, ownMember, setMember } from '../../util/json.js';
import { isJsonObject, type JsonObject, type JsonValue } from './jsonValue.js';
import { PatchError } from './patchError.js';

/**
 * JSON merge patch (RFC 7396, `application/merge-patch+json`) as kube-apiserver applies it
 * (evanphx/json-patch v4 `MergePatch`): objects merge key by key, `null` deletes a key, anything
 * else (arrays included) replaces the value. Every member is data, `__proto__` included: the
 * `json-merge-patch` package stops at such a key (dropping the rest of the patch) and assigns
 * members, so the few lines of the RFC's algorithm are ours.
 *
 * Where kube differs from the bare RFC, kube wins:
 * - the body must be a JSON object: `null`, a string, number or boolean is 400 "Invalid JSON
 *   Patch"; an array would replace the whole object, which kube then refuses as 422 Invalid;
 * - nulls inside objects that sit in arrays of the patch are dropped too (the RFC keeps them).
 *
 * Neither input is modified; the result shares nothing with the body, and with `doc` only the
 * parts the patch does not reach (each object it merges into is a copy), so it is to be read, or
 * copied before it is changed.
 */
export function applyMergePatch7396(doc: JsonObject, body: unknown): JsonObject {
  if (Array.isArray(body)) {
    throw PatchError.invalid(`patch: Invalid value: ${JSON.stringify(JSON.stringify(body))}: a merge patch must be a JSON object, not an array`);
  }
  if (!isJsonObject(body)) throw PatchError.badRequest('Invalid JSON Patch');
  const patch = cloneJson(body);
  pruneNullsInArrays(patch, false);
  return mergeInto(doc, patch) as JsonObject;
}

/** RFC 7396's MergePatch: a copy of `target` (when an object) with each member of `patch` merged in. */
function mergeInto(target: JsonValue | undefined, patch: JsonValue): JsonValue {
  if (!isJsonObject(patch)) return patch;
  // A spread defines members (CreateDataProperty), so an own `__proto__` stays data.
  const out: JsonObject = isJsonObject(target) ? { ...target } : {};
  for (const key of Object.keys(patch)) {
    const value = patch[key] as JsonValue;
    if (value === null) delete out[key];
    else setMember(out, key, mergeInto(ownMember(out, key), value));
  }
  return out;
}

/** Drops null members of objects found (at any depth) inside arrays of the patch. Mutates. */
function pruneNullsInArrays(value: JsonValue, inArray: boolean): void {
  if (Array.isArray(value)) {
    value.forEach((item) => pruneNullsInArrays(item, true));
  } else if (isJsonObject(value)) {
    for (const [key, child] of Object.entries(value)) {
      if (child === null && inArray) delete value[key];
      else pruneNullsInArrays(child, inArray);
    }
  }
}
