/**
 * Where Go's `base64.StdEncoding` (which kube's JSON decoding of a `[]byte`
 * field uses) first fails on a string, so that a refusal names the same
 * byte: `illegal base64 data at input byte N`. Padding is required, `\r` and
 * `\n` are skipped anywhere, and a quantum's unused bits may be set. N counts
 * bytes of the UTF-8 text, newlines included.
 */

const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const valid = new Set([...alphabet].map((c) => c.charCodeAt(0)));
const cr = 13;
const lf = 10;
const pad = 61;

function skipNewlines(src: Uint8Array, at: number): number {
  let i = at;
  while (i < src.length && (src[i] === cr || src[i] === lf)) i++;
  return i;
}

/** One quantum from `si`: where the next starts, or the offset of the error. */
function quantum(src: Uint8Array, start: number): { next: number } | { error: number } {
  let si = start;
  for (let j = 0; j < 4; j++) {
    if (si === src.length) return j === 0 ? { next: si } : { error: si - j };
    const c = src[si++] as number;
    if (valid.has(c)) continue;
    if (c === cr || c === lf) {
      j--;
      continue;
    }
    if (c !== pad || j < 2) return { error: si - 1 };
    if (j === 2) {
      // A second '=' must follow.
      si = skipNewlines(src, si);
      if (si === src.length) return { error: src.length };
      if (src[si] !== pad) return { error: si - 1 };
      si++;
    }
    si = skipNewlines(src, si);
    return si < src.length ? { error: si } : { next: si };
  }
  return { next: si };
}

/** The offset Go's standard base64 decoding fails at, or undefined when `text` decodes. */
export function base64ErrorOffset(text: string): number | undefined {
  const src = Buffer.from(text, 'utf8');
  let si = 0;
  while (si < src.length) {
    const step = quantum(src, si);
    if ('error' in step) return step.error;
    si = step.next;
  }
  return undefined;
}
