// Run by test/compact/objectShapes.test.ts under --disallow-code-generation-from-strings: prints what ObjectShapes made there.
import { ObjectShapes } from '../../src/compact/objectShapes.js';

const shapes = new ObjectShapes();
const shape = shapes.step(shapes.step(shapes.root, 0), 1);
const objects = ['a', 'b', 'c'].map((name, i) => shapes.make(shape, ['name', 'uid'], [name, i + 1], 2));
process.stdout.write(JSON.stringify({ objects, compiled: shape?.make === null ? 'null' : typeof shape?.make }));
