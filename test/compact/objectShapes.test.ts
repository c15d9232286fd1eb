import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { CompactCodec } from '../../src/compact/compactCodec.js';
import { ObjectShapes, type ObjectShape } from '../../src/compact/objectShapes.js';

const run = promisify(execFile);

/** The shape of `keys` (numbered by `numbers`), as a codec walks to it. */
function shapeOf(shapes: ObjectShapes, numbers: Map<string, number>, keys: readonly string[]): ObjectShape | undefined {
  let shape: ObjectShape | undefined = shapes.root;
  for (const key of keys) {
    if (!numbers.has(key)) numbers.set(key, numbers.size);
    shape = shapes.step(shape, numbers.get(key) as number);
  }
  return shape;
}

/** What `JSON.parse` makes of these members, in this order. */
function parsed(keys: readonly string[], values: readonly unknown[]): unknown {
  return JSON.parse(`{${keys.map((k, i) => `${JSON.stringify(k)}:${JSON.stringify(values[i])}`).join(',')}}`);
}

function expectSameObject(actual: Record<string, unknown>, expected: unknown): void {
  expect(Object.getPrototypeOf(actual)).to.equal(Object.prototype);
  expect(Object.keys(actual)).to.deep.equal(Object.keys(expected as object));
  expect(actual).to.deep.equal(expected);
  for (const key of Object.keys(actual)) expect(Object.getOwnPropertyDescriptor(actual, key)).to.include({ writable: true, enumerable: true, configurable: true });
}

describe('ObjectShapes (metadata made by one literal per key sequence)', () => {
  it('makes objects as JSON.parse does, in key order, before and after a sequence has its literal, repeated keys and __proto__ included', () => {
    const key = fc.constantFrom('name', 'namespace', 'uid', 'labels', '__proto__', 'constructor', '0', '10', 'a"b', 'x\u2028y');
    fc.assert(
      fc.property(fc.array(fc.array(fc.tuple(key, fc.jsonValue({ maxDepth: 1 })), { maxLength: 6 }), { minLength: 1, maxLength: 40 }), (objects) => {
        const shapes = new ObjectShapes();
        const numbers = new Map<string, number>();
        // Each sequence twice at least: the second object of a sequence is made by its literal.
        for (const members of [...objects, ...objects]) {
          const keys = members.map(([k]) => k);
          const values = members.map(([, v]) => v);
          const made = shapes.make(shapeOf(shapes, numbers, keys), keys, values, keys.length);
          expectSameObject(made, parsed(keys, values));
          if (keys.includes('__proto__')) expect(Object.getPrototypeOf(made)).to.equal(Object.prototype);
        }
      }),
    );
  });

  it('compiles a sequence on its second object, never one with __proto__, and reads only `count` of the scratch arrays', () => {
    const shapes = new ObjectShapes();
    const numbers = new Map<string, number>();
    const keys = ['name', 'namespace', 'stale'];
    const shape = shapeOf(shapes, numbers, keys.slice(0, 2)) as ObjectShape;
    expectSameObject(shapes.make(shape, keys, ['a', 'b', 'x'], 2), { name: 'a', namespace: 'b' });
    expect(shape.make).to.equal(undefined);
    expectSameObject(shapes.make(shape, keys, ['c', 'd', 'x'], 2), { name: 'c', namespace: 'd' });
    expect(shape.make).to.be.a('function');

    const proto = shapeOf(shapes, numbers, ['__proto__', 'name']) as ObjectShape;
    for (const value of [1, 2]) {
      const made = shapes.make(proto, ['__proto__', 'name'], [{ polluted: true }, value], 2);
      expect(Object.getOwnPropertyDescriptor(made, '__proto__')?.value).to.deep.equal({ polluted: true });
      expect((made as { polluted?: unknown }).polluted).to.equal(undefined);
    }
    expect(proto.make).to.equal(null);
  });

  it('stops making new shapes past its bound and still makes every object right', () => {
    const shapes = new ObjectShapes();
    const numbers = new Map<string, number>();
    let unshaped = 0;
    for (let i = 0; i < 600; i++) {
      const keys = [`k${i % 37}`, `k${(i * 7) % 41}`, `j${i}`];
      const shape = shapeOf(shapes, numbers, keys);
      if (shape === undefined) unshaped++;
      expectSameObject(shapes.make(shape, keys, [i, i + 1, String(i)], 3), parsed(keys, [i, i + 1, String(i)]));
    }
    expect(unshaped).to.be.greaterThan(0);
  });

  it('makes the same objects where code cannot be generated (--disallow-code-generation-from-strings)', async function () {
    this.timeout(30_000);
    const script = fileURLToPath(new URL('../support/objectShapesNoCodegen.ts', import.meta.url));
    const { stdout } = await run(process.execPath, ['--disallow-code-generation-from-strings', '--import', 'tsx', script], { timeout: 25_000 });
    expect(JSON.parse(stdout)).to.deep.equal({ objects: [{ name: 'a', uid: 1 }, { name: 'b', uid: 2 }, { name: 'c', uid: 3 }], compiled: 'null' });
  });

  it('gives the codec metadata equal to JSON.parse, key order included, for objects of one shape and of many', () => {
    const codec = new CompactCodec({ dropManagedFields: false, transformed: false });
    const metadata = fc.record(
      { name: fc.string({ minLength: 1, maxLength: 6 }), namespace: fc.constantFrom('a', 'b'), uid: fc.uuid(), labels: fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 }), { maxKeys: 2 }), extra: fc.integer() },
      { requiredKeys: ['name'] },
    );
    fc.assert(
      fc.property(fc.array(metadata, { minLength: 1, maxLength: 20 }), (all) => {
        for (const meta of all) {
          const line = Buffer.from(`{"type":"MODIFIED","object":{"apiVersion":"v1","kind":"Pod","metadata":${JSON.stringify(meta)},"spec":{}}}`);
          const event = codec.line(line, 0, line.length) as { object: { metadata: Record<string, unknown> } };
          expectSameObject({ ...event.object.metadata }, JSON.parse(JSON.stringify(meta)));
          expect(Object.keys(event.object.metadata)).to.deep.equal(Object.keys(meta));
          expect(Object.isFrozen(event.object.metadata)).to.equal(true);
        }
      }),
    );
  });
});
