import fc from 'fast-check';

/** Shared fast-check arbitraries of the fuzz tests. */

type Edit =
  | { op: 'insert'; at: number; text: string }
  | { op: 'delete'; at: number; length: number }
  | { op: 'replace'; at: number; text: string }
  | { op: 'truncate'; at: number }
  | { op: 'repeat'; at: number; length: number };

function edit(unit: fc.Arbitrary<string>): fc.Arbitrary<Edit> {
  const at = fc.nat();
  return fc.oneof(
    fc.record({ op: fc.constant('insert' as const), at, text: unit }),
    fc.record({ op: fc.constant('delete' as const), at, length: fc.integer({ min: 1, max: 4 }) }),
    fc.record({ op: fc.constant('replace' as const), at, text: unit }),
    fc.record({ op: fc.constant('truncate' as const), at }),
    fc.record({ op: fc.constant('repeat' as const), at, length: fc.integer({ min: 1, max: 6 }) }),
  );
}

function applyEdit(text: string, e: Edit): string {
  const at = text.length === 0 ? 0 : e.at % (text.length + 1);
  switch (e.op) {
    case 'insert':
      return text.slice(0, at) + e.text + text.slice(at);
    case 'delete':
      return text.slice(0, at) + text.slice(at + e.length);
    case 'replace':
      return text.slice(0, at) + e.text + text.slice(at + 1);
    case 'truncate':
      return text.slice(0, at);
    case 'repeat':
      return text.slice(0, at + e.length) + text.slice(at);
  }
}

/** Near-valid text: a valid text with one to three random edits (insert, delete, replace, truncate, repeat) of `unit`s. */
export function mutated(valid: fc.Arbitrary<string>, unit: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.tuple(valid, fc.array(edit(unit), { minLength: 1, maxLength: 3 })).map(([text, edits]) => edits.reduce(applyEdit, text));
}

/** Values of every JSON-ish and non-JSON type, for metadata fields that should hold strings. */
export const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.constant(''),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.string({ maxLength: 8 }),
  fc.string({ unit: 'grapheme', maxLength: 8 }),
  // Long enough to matter, shrunk towards the short end so a report stays readable.
  fc.integer({ min: 300, max: 100_000 }).map((n) => 'x'.repeat(n)),
  fc.constant('a/b'),
  fc.constant('名前-ünï'),
  fc.constant({}),
  fc.constant([]),
  fc.array(fc.string({ maxLength: 3 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 3 }), fc.string({ maxLength: 3 }), { maxKeys: 3 }),
);
