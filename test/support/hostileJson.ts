import { expect } from 'chai';
import fc from 'fast-check';

/**
 * JSON whose member names are those that touch prototypes when a copy
 * assigns them (`__proto__`, `constructor`, `prototype`, ...), for the
 * property tests that every copy, merge, diff and patch keeps them as data.
 * Values are made by `JSON.parse`, as a server or client receives them:
 * `"__proto__"` is then an own member.
 */

export const hostileKeys = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'a', 'b'] as const;

type Node = null | boolean | number | string | Node[] | { entries: [string, Node][] };

const { node } = fc.letrec<{ node: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom<Node>(null, true, false, 0, 1.5, 'x', ''),
    fc.array(tie('node'), { maxLength: 3 }),
    fc.array(fc.tuple(fc.constantFrom(...hostileKeys), tie('node')), { maxLength: 4 }).map((entries) => ({ entries })),
  ),
}));

function text(value: Node): string {
  if (Array.isArray(value)) return `[${value.map(text).join(',')}]`;
  if (value !== null && typeof value === 'object') return `{${value.entries.map(([k, v]) => `${JSON.stringify(k)}:${text(v)}`).join(',')}}`;
  return JSON.stringify(value);
}

/** JSON text of an object whose members (at any depth) are often named `__proto__`, `constructor` or `prototype`. */
export const hostileJsonText: fc.Arbitrary<string> = fc.array(fc.tuple(fc.constantFrom(...hostileKeys), node), { maxLength: 5 }).map((entries) => text({ entries }));

/** `value` as JSON text with every object's keys sorted: equal texts mean equal JSON data. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** Every object inside `value` (itself included) has `Object.prototype` as its prototype, every array `Array.prototype`. */
export function expectOrdinaryPrototypes(value: unknown, where = '(root)'): void {
  if (value === null || typeof value !== 'object') return;
  if (Array.isArray(value)) {
    expect(Object.getPrototypeOf(value), `prototype of the array at ${where}`).to.equal(Array.prototype);
    value.forEach((item, i) => expectOrdinaryPrototypes(item, `${where}/${i}`));
    return;
  }
  expect(Object.getPrototypeOf(value), `prototype of the object at ${where}`).to.equal(Object.prototype);
  for (const key of Object.keys(value)) expectOrdinaryPrototypes((value as Record<string, unknown>)[key], `${where}/${key}`);
}

/** What `Object.prototype` and `Array.prototype` hold now, to compare with {@link expectPrototypesUnchanged} after a test. */
export type PrototypeSnapshot = { proto: object; key: string | symbol; descriptor: PropertyDescriptor }[];

export function prototypeSnapshot(): PrototypeSnapshot {
  return [Object.prototype, Array.prototype].flatMap((proto) =>
    Reflect.ownKeys(proto).map((key) => ({ proto, key, descriptor: Object.getOwnPropertyDescriptor(proto, key) as PropertyDescriptor })),
  );
}

/** No member was added to, removed from or changed in `Object.prototype` or `Array.prototype` since `before`. */
export function expectPrototypesUnchanged(before: PrototypeSnapshot): void {
  const now = prototypeSnapshot();
  expect(now.map((e) => String(e.key)), 'the members of Object.prototype and Array.prototype').to.deep.equal(before.map((e) => String(e.key)));
  now.forEach((entry, i) => {
    const was = before[i]?.descriptor;
    const is = entry.descriptor;
    expect([is.value, is.get, is.set, is.writable, is.enumerable], `Object.prototype or Array.prototype member ${String(entry.key)}`).to.deep.equal([was?.value, was?.get, was?.set, was?.writable, was?.enumerable]);
  });
  expect(Object.getPrototypeOf(Object.prototype)).to.equal(null);
  expect(Object.getPrototypeOf(Array.prototype)).to.equal(Object.prototype);
}
