/**
 * Orders two resourceVersions, as KEP-5504 ("comparable resource
 * versions") defines it for kube-apiserver: a resourceVersion that is a
 * decimal integer without leading zeros compares as that integer (the
 * longer string is the larger; of two as long, the lexically larger).
 * Anything else is opaque, as the API conventions have always said: the
 * answer is `undefined` unless the two are equal (0). Never throws.
 */
export function compareResourceVersions(a: string, b: string): -1 | 0 | 1 | undefined {
  if (a === b) return 0;
  if (!isCanonicalInteger(a) || !isCanonicalInteger(b)) return undefined;
  if (a.length !== b.length) return a.length < b.length ? -1 : 1;
  return a < b ? -1 : 1;
}

/** `a` is at `b` or after it: equal, or comparable and larger. */
export function reachedResourceVersion(a: string | undefined, b: string): boolean {
  if (a === undefined) return false;
  const order = compareResourceVersions(a, b);
  return order === 0 || order === 1;
}

function isCanonicalInteger(text: string): boolean {
  if (typeof text !== 'string' || text.length === 0) return false;
  if (text.length > 1 && text.charCodeAt(0) === 48) return false; // a leading zero
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return true;
}
