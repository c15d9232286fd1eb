import { setMember } from '../util/json.js';

/** Key sequences kept; objects of any other are built property by property. */
const MAX_SHAPES = 256;

type Make = (values: readonly unknown[]) => Record<string, unknown>;

/** One key sequence (the path to it from the root), and how its objects are made. */
export class ObjectShape {
  /** The sequence one key longer, by the key's number. */
  readonly next: (ObjectShape | undefined)[] = [];
  /** Objects made of this sequence so far. */
  uses = 0;
  /** Its compiled literal; null when it cannot have one. */
  make: Make | null | undefined;
}

/**
 * Makes the objects whose keys come in a sequence seen before (metadata's:
 * name, namespace, uid, ... in the order kube writes them) with one object
 * literal compiled for that sequence, instead of adding each property in
 * turn: a literal makes the object in one step, with every property inside
 * it and one hidden class for all the objects of the sequence, which is
 * several times cheaper than ten property additions and makes every later
 * read of them monomorphic. The objects are as `JSON.parse` makes them:
 * own enumerable properties in the order given, the last of a repeated key
 * winning. Keys are numbers the caller gives its own key strings (at most a
 * few dozen). A sequence with `__proto__` (which a literal would take for
 * the prototype) is always built property by property, and so is any
 * sequence where code cannot be generated (`--disallow-code-generation-from-strings`).
 * One per codec.
 */
export class ObjectShapes {
  readonly root = new ObjectShape();
  private shapes = 1;

  /** The sequence `shape` followed by key number `k`; undefined past `MAX_SHAPES` or after undefined. */
  step(shape: ObjectShape | undefined, k: number): ObjectShape | undefined {
    if (shape === undefined) return undefined;
    let next = shape.next[k];
    if (next === undefined && this.shapes < MAX_SHAPES) {
      this.shapes++;
      next = shape.next[k] = new ObjectShape();
    }
    return next;
  }

  /** The object with `keys[i]: values[i]` for i below `count`, `shape` being the sequence of those keys (if it is known). */
  make(shape: ObjectShape | undefined, keys: readonly string[], values: readonly unknown[], count: number): Record<string, unknown> {
    if (shape !== undefined && shape !== this.root) {
      // The first object of a sequence is built by hand: many sequences are met once (a list's odd object).
      if (shape.make === undefined && ++shape.uses >= 2) shape.make = compile(keys, count);
      if (shape.make) return shape.make(values);
    }
    return byProperty(keys, values, count);
  }
}

function byProperty(keys: readonly string[], values: readonly unknown[], count: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < count; i++) {
    const key = keys[i] as string;
    // As `JSON.parse` makes it: an own property, never the prototype.
    setMember(out, key, values[i]);
  }
  return out;
}

function compile(keys: readonly string[], count: number): Make | null {
  const members: string[] = [];
  for (let i = 0; i < count; i++) {
    const key = keys[i] as string;
    if (key === '__proto__') return null;
    // JSON.stringify writes any string as a JavaScript string literal.
    members.push(`${JSON.stringify(key)}:v[${i}]`);
  }
  try {
    return new Function('v', `return {${members.join(',')}};`) as Make;
  } catch {
    return null;
  }
}
