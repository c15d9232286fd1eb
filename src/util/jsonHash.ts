/**
 * A 32-bit FNV-1a hash of JSON data (strings, numbers, booleans, null,
 * arrays, plain objects; keys in their order), computed without building
 * its text: for looking values up by content where equal values must hash
 * the same and a collision is settled by comparing them. `chars` counts the
 * characters hashed, a measure of the value's size.
 */
export function jsonHash(value: unknown): { hash: number; chars: number } {
  const state = { hash: 0x811c9dc5, chars: 0 };
  mix(state, value);
  return state;
}

interface HashState {
  hash: number;
  chars: number;
}

function mixString(state: HashState, text: string): void {
  let h = state.hash;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  // The length ends the string, so that {"ab":"c"} and {"a":"bc"} differ.
  state.hash = Math.imul(h ^ (text.length + 0x100000), 0x01000193);
  state.chars += text.length;
}

function mixTag(state: HashState, tag: number): void {
  state.hash = Math.imul(state.hash ^ tag, 0x01000193);
  state.chars += 1;
}

function mix(state: HashState, value: unknown): void {
  switch (typeof value) {
    case 'string':
      mixTag(state, 1);
      mixString(state, value);
      return;
    case 'number':
      mixTag(state, 2);
      mixString(state, String(value));
      return;
    case 'boolean':
      mixTag(state, value ? 3 : 4);
      return;
    case 'object':
      if (value === null) {
        mixTag(state, 5);
      } else if (Array.isArray(value)) {
        mixTag(state, 6);
        for (let i = 0; i < value.length; i++) mix(state, value[i]);
        mixTag(state, 7);
      } else {
        mixTag(state, 8);
        for (const key in value) {
          mixString(state, key);
          mix(state, (value as Record<string, unknown>)[key]);
        }
        mixTag(state, 9);
      }
      return;
    default:
      // undefined, a function: what JSON leaves out; the comparison that follows a hit decides.
      mixTag(state, 10);
  }
}
