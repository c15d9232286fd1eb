import { expect } from 'chai';
import fc from 'fast-check';
import { Subject } from 'rxjs';
import { annotationsChanged, deltas, dropManagedFields, filterDeltas, generationChanged, indexer, labelsChanged, mapToOwners, or, resourceVersionChanged, type Delta, type KubeObject, type ListWatchEvent, type StoreEvent } from 'rxkube';
import { byLabel, byOwnerUid } from '../../src/store/indexFunctions.js';
import { CompactCodec } from '../../src/compact/compactCodec.js';
import { compactCodec } from '../../src/sources/sourceCodec.js';
import { ListBodyParser } from '../../src/sources/listBodyParser.js';
import { MalformedWatchLineError, WatchLineReader, type WatchLine } from '../../src/sources/watchLineReader.js';
import { compactRecordOf, readable, releaseCompact } from '../../src/compact/compactObject.js';
import { SLAB_BYTES, SLACK } from '../../src/compact/bodySlabs.js';
import { shapeObject } from '../../src/sources/watchEvents.js';

type Plain = Record<string, unknown>;

const codec = () => new CompactCodec({ dropManagedFields: false, transformed: false });

const name = fc.stringMatching(/^[a-z][a-z0-9-]{0,8}$/);
/** Objects shaped as kube sends them, with odd corners: escapes, unicode, braces in strings, keys in any order. */
const kubeObject: fc.Arbitrary<Plain> = fc
  .record(
    {
      apiVersion: fc.constantFrom('v1', 'apps/v1', 'example.com/v1"quoted"'),
      kind: fc.constantFrom('Pod', 'ConfigMap', 'Thing{}'),
      metadata: fc.record(
        {
          name,
          namespace: fc.constantFrom('default', 'ns-ü', 'a\\b'),
          uid: fc.uuid(),
          resourceVersion: fc.integer({ min: 1 }).map(String),
          generation: fc.integer(),
          labels: fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ unit: 'grapheme', maxLength: 5 }), { maxKeys: 3 }),
          annotations: fc.dictionary(fc.string({ maxLength: 5 }), fc.constantFrom('{"a":[1]}', '}]', '\\"', '\n\t')),
          ownerReferences: fc.array(fc.record({ uid: fc.uuid(), name, controller: fc.boolean() }), { maxLength: 2 }),
          finalizers: fc.array(name, { maxLength: 2 }),
          managedFields: fc.array(fc.record({ manager: name, fieldsV1: fc.constant({ 'f:metadata': { 'k:{"uid":"x"}': {} } }) }), { maxLength: 2 }),
        },
        { requiredKeys: ['name'] },
      ),
      spec: fc.jsonValue({ maxDepth: 3 }),
      status: fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
      data: fc.dictionary(fc.string({ unit: 'grapheme', maxLength: 4 }), fc.string({ unit: 'grapheme', maxLength: 6 }), { maxKeys: 3 }),
    },
    { requiredKeys: ['metadata'] },
  )
  .chain((o) => fc.shuffledSubarray(Object.keys(o), { minLength: Object.keys(o).length }).map((order) => Object.fromEntries(order.map((k) => [k, (o as Plain)[k]]))));

function expectDeepFrozen(value: unknown, path = 'object'): void {
  if (value === null || typeof value !== 'object') return;
  expect(Object.isFrozen(value), `${path} is frozen`).to.equal(true);
  for (const [k, v] of Object.entries(value)) expectDeepFrozen(v, `${path}.${k}`);
}

/** What every reader of a compact object must see: the object, as JSON.parse gives it. */
function expectReadsAs(view: unknown, expected: Plain): void {
  expect(compactRecordOf(view), 'a compact view').to.not.equal(undefined);
  const decoded = readable(view as KubeObject);
  expect(decoded).to.deep.equal(expected);
  expect(compactRecordOf(decoded), 'readers get an ordinary object').to.equal(undefined);
  expectDeepFrozen(decoded);
  // The view itself reads as the object through every way of reading one.
  expect(JSON.parse(JSON.stringify(view))).to.deep.equal(expected);
  expect({ ...(view as Plain) }).to.deep.equal(expected);
  expect(new Set(Object.keys(view as Plain))).to.deep.equal(new Set(Object.keys(expected)));
  for (const key of Object.keys(expected)) {
    expect(key in (view as Plain), key).to.equal(true);
    expect((view as Plain)[key], key).to.deep.equal(expected[key]);
  }
  expect('nothing' in (view as Plain)).to.equal(false);
  expect((view as Plain).nothing).to.equal(undefined);
}

describe('the compact cache codec: objects read from their bytes, metadata decoded, the rest kept as text', () => {
  it('reads list items and watch lines, in any key order and spacing, as JSON.parse does (property)', () => {
    const c = codec();
    fc.assert(
      fc.property(kubeObject, fc.constantFrom('MODIFIED', 'ADDED', 'DELETED'), fc.constantFrom(undefined, 1), fc.boolean(), (object, type, indent, typeFirst) => {
        const text = JSON.stringify(object, null, indent);
        const expected = JSON.parse(text) as Plain;
        expectReadsAs(c.item(Buffer.from(text)), expected);
        const event = typeFirst ? `{"type":"${type}","object":${text}}` : `{"object":${text},"type":"${type}"}`;
        const line = Buffer.from(`  ${event}  \n`);
        const got = c.line(line, 2, line.length - 1) as WatchLine;
        expect(got.type).to.equal(type);
        expectReadsAs(got.object, expected);
      }),
      { numRuns: 400 },
    );
  });

  it('reads each line of a chunk in place, backslashes before, in and after it, as JSON.parse reads the line alone (property)', () => {
    const c = codec();
    fc.assert(
      fc.property(fc.array(fc.tuple(kubeObject, fc.constantFrom('MODIFIED', 'ADDED', 'DELETED')), { minLength: 1, maxLength: 6 }), fc.nat(), (events, cut) => {
        const lines = events.map(([object, type]) => `{"type":"${type}","object":${JSON.stringify(object)}}`);
        const chunk = Buffer.from(lines.map((l) => `${l}\n`).join(''));
        let from = 0;
        for (const text of lines) {
          const to = from + Buffer.byteLength(text);
          const got = c.line(chunk, from, to) as WatchLine;
          const expected = JSON.parse(text) as WatchLine;
          expect(got.type).to.equal(expected.type);
          expectReadsAs(got.object, expected.object as Plain);
          from = to + 1;
        }
        // Through the reader, the same bytes in two chunks cut anywhere: the second chunk's lines are read in it.
        const at = cut % (chunk.length + 1);
        const read: WatchLine[] = [];
        const reader = new WatchLineReader((e) => read.push(e), (e) => expect.fail(e.message), Infinity, () => {}, (buf, start, end) => c.line(buf, start, end));
        reader.push(chunk.subarray(0, at));
        reader.push(chunk.subarray(at));
        reader.end();
        expect(read).to.have.length(lines.length);
        read.forEach((e, i) => expectReadsAs(e.object, (JSON.parse(lines[i] as string) as WatchLine).object as Plain));
      }),
      { numRuns: 300 },
    );
  });

  it('reads a line in place as the line alone, whatever follows it in the chunk', () => {
    const c = codec();
    const line = '{"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"a","labels":{"x":"y"}},"spec":{"s":"t"}}}';
    // After it: bytes that would pass for more of it, or for its members, were the line not cut at its end.
    for (const after of ['', '}', ',"more":1}}', '{"type":"MODIFIED","object":{"metadata":{"labels":{"x":"y"}}}}', '\\"}}', ' \t\r']) {
      const chunk = Buffer.from(`${line}${after}`);
      const got = c.line(chunk, 0, line.length) as WatchLine;
      expectReadsAs(got.object, (JSON.parse(line) as WatchLine).object as Plain);
    }
    // Cut short in its metadata (what is checked as it arrives): not JSON, whatever the bytes after the cut would make of it.
    const whole = Buffer.from(line);
    for (const cut of [line.indexOf('"y"') + 1, line.indexOf('"labels"'), line.indexOf('"spec"') - 1]) {
      expect(() => c.line(whole, 0, cut), `cut at ${cut}`).to.throw(SyntaxError);
    }
  });

  it('decodes metadata member by member as JSON.parse does: any scalar, escaped and odd keys, __proto__, repeated keys, key order, shared strings (property)', () => {
    const c = codec();
    // A few values often: a shared field's string (namespace, generateName, timestamps) is taken from a recent one when the bytes repeat.
    const repeated = fc.constantFrom('team-1', 'a"b', 'a\\b', 'a\\"b', 'ns-ü', '', '2026-11-29T08:00:00Z');
    const scalar = fc.oneof(repeated, fc.string({ unit: 'binary', maxLength: 8 }), fc.string({ maxLength: 8 }), fc.boolean(), fc.constant(null), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }));
    const key = fc.constantFrom('name', 'uid', 'labels', '__proto__', 'constructor', 'na\\me', 'namespace', 'generateName', 'creationTimestamp', 'deletionTimestamp');
    const member = fc.tuple(fc.oneof(key, key, fc.string({ unit: 'binary', maxLength: 6 })), fc.oneof(scalar, fc.dictionary(fc.string({ maxLength: 3 }), scalar, { maxKeys: 2 })));
    fc.assert(
      fc.property(fc.array(member, { maxLength: 8 }), fc.boolean(), (members, escapeKeys) => {
        // Written by hand, not by JSON.stringify: keys may repeat, and may be spelled with \u escapes.
        const key = (k: string) => (escapeKeys ? `"${[...k].map((ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"` : JSON.stringify(k));
        const metadata = `{${members.map(([k, v]) => `${key(k)}:${JSON.stringify(v)}`).join(',')}}`;
        const text = `{"kind":"Thing","metadata":${metadata},"spec":{"a":1}}`;
        const expected = JSON.parse(text) as Plain & { metadata: Plain };
        const view = c.item(Buffer.from(text)) as Plain & { metadata: Plain };
        expect(Object.getPrototypeOf(view.metadata)).to.equal(Object.prototype);
        expect(Object.keys(view.metadata)).to.deep.equal(Object.keys(expected.metadata));
        expectReadsAs(view, expected);
        const line = Buffer.from(`{"type":"MODIFIED","object":${text}}`);
        expect(Object.keys((c.line(line, 0, line.length) as WatchLine & { object: Plain & { metadata: Plain } }).object.metadata)).to.deep.equal(Object.keys(expected.metadata));
      }),
      { numRuns: 800 },
    );
  });

  it('takes a shared field\'s string (apiVersion, kind, namespace, generateName, timestamps) from a recent one only when its bytes are that string', () => {
    const c = codec();
    // Each after the ones before it: equal bytes, or bytes that would equal a recent string's characters were escapes not read;
    // interleaved (the namespaces of a busy watch), and alike at the end, where a recent string's slot is chosen.
    const values = ['team-1', 'team-1', 'team-2', 'a\\"b', 'a"b', 'a\\"b', 'a\\b', 'a\b', 'a\\b', 'ns-ü', 'ns-ü', 'ns-\\u00fc', '', '', 'x'];
    values.push('team-1', 'team-2', 'team-12', 'team-1', 'team-21', 'team-2', 'aa-xyz', 'bb-xyz', 'aa-xyz', 'a-xyz\\"', 'a-xyz"', 'web-7d4b9c8f6-', 'web-5c8d7b9a1-', 'web-7d4b9c8f6-');
    for (const field of ['namespace', 'generateName', 'creationTimestamp', 'deletionTimestamp']) {
      for (const value of values) {
        const text = `{"kind":"Pod","metadata":{"name":"p",${JSON.stringify(field)}:${JSON.stringify(value)}},"spec":{}}`;
        const line = Buffer.from(`{"type":"MODIFIED","object":${text}}`);
        const got = (c.line(line, 0, line.length) as WatchLine & { object: Plain & { metadata: Plain } }).object.metadata[field];
        expect(got, `${field} ${JSON.stringify(value)}`).to.equal(value);
        expect((c.item(Buffer.from(text)) as Plain & { metadata: Plain }).metadata[field]).to.equal(value);
      }
    }
    for (const field of ['apiVersion', 'kind']) {
      for (const value of values) {
        const text = `{${JSON.stringify(field)}:${JSON.stringify(value)},"metadata":{"name":"p"},"spec":{}}`;
        const line = Buffer.from(`{"type":"MODIFIED","object":${text}}`);
        expect((c.line(line, 0, line.length) as WatchLine & { object: Plain }).object[field], `${field} ${JSON.stringify(value)}`).to.equal(value);
        expect((c.item(Buffer.from(text)) as Plain)[field]).to.equal(value);
      }
    }
  });

  it('refuses every write to a view, as a frozen object does, and freezes metadata', () => {
    const view = codec().item(Buffer.from('{"kind":"Pod","metadata":{"name":"a","labels":{"x":"1"}},"spec":{"n":1}}')) as Plain & { metadata: Plain & { labels: Plain } };
    expect(() => (view.kind = 'x')).to.throw(TypeError);
    expect(() => delete view.spec).to.throw(TypeError);
    expect(() => Object.defineProperty(view, 'y', { value: 1 })).to.throw(TypeError);
    expect(() => (view.metadata.name = 'b')).to.throw(TypeError);
    expect(() => (view.metadata.labels.x = '2')).to.throw(TypeError);
    expect(() => ((view.spec as Plain).n = 2)).to.throw(TypeError);
    expect(Object.getPrototypeOf(view)).to.equal(Object.prototype);
    expect(view.hasOwnProperty('spec')).to.equal(true);
  });

  it('shares equal metadata values (labels, owners, managedFields) between objects, and not different ones', () => {
    const c = codec();
    const pod = (n: string, app: string) =>
      c.item(Buffer.from(JSON.stringify({ metadata: { name: n, labels: { app }, ownerReferences: [{ uid: 'rs' }], managedFields: [{ manager: 'm' }] }, spec: {} }))) as KubeObject;
    const [a, b, other] = [pod('a', 'web'), pod('b', 'web'), pod('c', 'db')];
    expect(a.metadata.labels).to.equal(b.metadata.labels);
    expect(a.metadata.ownerReferences).to.equal(other.metadata.ownerReferences);
    expect(a.metadata.managedFields).to.equal(b.metadata.managedFields);
    expect(other.metadata.labels).to.not.equal(a.metadata.labels);
    expect(other.metadata.labels).to.deep.equal({ app: 'db' });
    expect(a.metadata).to.not.equal(b.metadata);
    // managedFields entries that differ by their time alone share their fieldsV1.
    const entry = (time: string) => ({ manager: 'kubelet', time, fieldsV1: { 'f:status': { 'f:phase': {} } } });
    const [early, late] = ['08:00', '09:00'].map((time, i) => c.item(Buffer.from(JSON.stringify({ metadata: { name: `m${i}`, managedFields: [entry(time)] } }))) as KubeObject);
    const fields = (o: KubeObject | undefined) => (o?.metadata.managedFields as { fieldsV1: unknown; time: string }[])[0];
    expect(fields(early)?.fieldsV1).to.equal(fields(late)?.fieldsV1);
    expect([fields(early)?.time, fields(late)?.time]).to.deep.equal(['08:00', '09:00']);
    expect(readable(late as KubeObject)).to.deep.equal({ metadata: { name: 'm1', managedFields: [entry('09:00')] } });
    // A value whose bytes are a recent one's is stepped over unscanned; what follows it is still checked.
    const c2 = codec();
    const first = c2.item(Buffer.from('{"metadata":{"name":"a","labels":{"app":"web"}},"spec":{}}')) as KubeObject;
    const second = c2.item(Buffer.from('{"metadata":{"name":"b","labels":{"app":"web"},"annotations":{"x":"}"}},"spec":{}}')) as KubeObject;
    expect(second.metadata.labels).to.equal(first.metadata.labels);
    expect(second.metadata.annotations).to.deep.equal({ x: '}' });
    expect(() => c2.item(Buffer.from('{"metadata":{"name":"c","labels":{"app":"web"}}}},"spec":{}}'))).to.throw(SyntaxError);
    expect(() => c2.item(Buffer.from('{"metadata":{"name":"c","labels":{"app":"web"}"x":1},"spec":{}}'))).to.throw(SyntaxError, 'expected ","');
    expect((c2.item(Buffer.from('{"metadata":{"name":"d","labels":{"app":"webs"}},"spec":{}}')) as KubeObject).metadata.labels).to.deep.equal({ app: 'webs' });
  });

  it('reads the objects of more owners than it keeps recent values for, in any interleaving, as JSON.parse does, each owner\'s values shared (property)', () => {
    // Owners whose values differ in a byte or two, most of them of one length: only the bytes tell them apart. More of them than it keeps.
    const owner = (o: number) => ({
      labels: { app: 'web', 'pod-template-hash': `7d4b9c8f${o}` },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `web-${o}`, uid: `rs-${o}` }],
      managedFields: [{ manager: `m${o}`, fieldsV1: { 'f:metadata': { 'f:labels': {} } } }],
    });
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 19 }), { minLength: 1, maxLength: 60 }), fc.boolean(), (owners, drop) => {
        const c = drop ? compactCodec(dropManagedFields) : codec();
        const seen = new Map<number, KubeObject>();
        owners.forEach((o, i) => {
          const object = { apiVersion: 'v1', kind: 'Pod', metadata: { name: `p${i}`, namespace: 'team', ...owner(o) }, spec: { n: i } };
          const text = JSON.stringify(object);
          const line = Buffer.from(`{"type":"MODIFIED","object":${text}}`);
          const read = (i % 3 === 0 ? c.item(Buffer.from(text)) : (c.line(line, 0, line.length) as { object: unknown }).object) as KubeObject;
          const expected = JSON.parse(text) as KubeObject;
          if (drop) delete expected.metadata.managedFields;
          expect(readable(read)).to.deep.equal(expected);
          const before = seen.get(o);
          if (before !== undefined) {
            expect(read.metadata.labels, `owner ${o}'s labels`).to.equal(before.metadata.labels);
            expect(read.metadata.ownerReferences, `owner ${o}'s ownerReferences`).to.equal(before.metadata.ownerReferences);
          }
          seen.set(o, read);
        });
      }),
    );
  });

  it('reads the objects of many owners in turn, then of few, as JSON.parse does, past the windows in which it narrows and widens its search', () => {
    const c = codec();
    const seen = new Map<number, KubeObject>();
    let i = 0;
    for (const [count, owners] of [[3000, 40], [9000, 2], [3000, 25]] as const) {
      for (let k = 0; k < count; k++, i++) {
        const o = i % owners;
        const metadata = { name: `p${i}`, labels: { hash: `h${o}` }, ownerReferences: [{ uid: `rs-${o}` }], managedFields: [{ manager: 'm', fieldsV1: { [`k:{"uid":"rs-${o}"}`]: {} } }] };
        const text = JSON.stringify({ metadata, spec: { i } });
        const read = c.item(Buffer.from(text)) as KubeObject;
        if (k % 97 === 0) expect(readable(read)).to.deep.equal(JSON.parse(text));
        else expect(read.metadata.labels).to.deep.equal({ hash: `h${o}` });
        const before = seen.get(o);
        if (before !== undefined) expect(read.metadata.ownerReferences, `owner ${o}`).to.equal(before.metadata.ownerReferences);
        seen.set(o, read);
      }
    }
  });

  it('decodes a value stepped over as the bytes it was stepped over for: a repeated key, or other bytes at the same place', () => {
    // The scanner steps over a value equal to a recent one; decoding then trusts that finding, of that scan alone.
    const c = codec();
    c.item(Buffer.from('{"metadata":{"name":"a","labels":{"app":"web"}},"spec":{}}'));
    // The second labels (the one JSON.parse keeps) is a recent one's bytes; the first, decoded before it, is not.
    const twice = c.item(Buffer.from('{"metadata":{"name":"b","labels":{"app":"db"},"labels":{"app":"web"}},"spec":{}}')) as KubeObject;
    expect(twice.metadata.labels).to.deep.equal({ app: 'web' });
    // A watch line whose labels are stepped over, then a list item whose different labels begin at the same byte.
    const line = Buffer.from('{"type":"MODIFIED","object":{"metadata":{"name":"c","labels":{"app":"web"}},"spec":{}}}');
    c.line(line, 0, line.length);
    const at = line.indexOf('{"app"');
    const pad = 'x'.repeat(at - Buffer.from('{"metadata":{"name":"","labels":').length);
    const item = Buffer.from(`{"metadata":{"name":"${pad}","labels":{"app":"wex"}},"spec":{}}`);
    expect(item.indexOf('{"app"')).to.equal(at);
    expect((c.item(item) as KubeObject).metadata.labels).to.deep.equal({ app: 'wex' });
  });

  it('drops managedFields on the bytes when the transform is dropManagedFields, and freezes metadata only after another transform', () => {
    const text = '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","managedFields":[{"manager":"m"}],"labels":{"a":"b"}},"spec":{}}';
    const dropping = compactCodec(dropManagedFields);
    const dropped = dropping.item(Buffer.from(text)) as KubeObject;
    expect(readable(dropped)).to.deep.equal({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a', labels: { a: 'b' } }, spec: {} });
    expect(Object.isFrozen(dropped.metadata), 'dropManagedFields is done on the bytes: frozen at once').to.equal(true);
    // The same managedFields again is stepped over unread; other ones, broken ones included, are still read.
    const again = dropping.item(Buffer.from(text.replace('"name":"a"', '"name":"b"'))) as KubeObject;
    expect(readable(again).metadata).to.deep.equal({ name: 'b', labels: { a: 'b' } });
    const changed = dropping.item(Buffer.from(text.replace('"m"', '"n"').replace('"b"}', '"c"}'))) as KubeObject;
    expect(readable(changed).metadata).to.deep.equal({ name: 'a', labels: { a: 'c' } });
    expect(() => dropping.item(Buffer.from(text.replace('[{"manager":"m"}]', '[{"manager":"m"]}]')))).to.throw(SyntaxError);
    // One that is not an array (null) goes too, and the transform, run after, finds nothing left to delete in the frozen metadata.
    for (const nulled of [text.replace('[{"manager":"m"}]', 'null'), '{"metadata":{"name":"a","managedFields":null}}']) {
      const view = dropping.item(Buffer.from(nulled)) as KubeObject;
      expect(view.metadata, nulled).to.not.have.property('managedFields');
      expect(() => dropManagedFields(view)).to.not.throw();
    }
    const other = compactCodec((o: KubeObject) => o).item(Buffer.from(text)) as KubeObject;
    expect(Object.isFrozen(other.metadata), 'open to the transform').to.equal(false);
    expect(Object.isFrozen(compactCodec(undefined).item(Buffer.from(text)) as KubeObject), 'no transform: frozen at once').to.equal(false);
    expect(Object.isFrozen((compactCodec(undefined).item(Buffer.from(text)) as KubeObject).metadata)).to.equal(true);
  });

  it('freezes the metadata a transform leaves, whether it returns the view or a new object carrying its metadata', () => {
    const text = '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","labels":{"a":"b"}},"spec":{"x":1}}';
    const sink = (transform: (o: KubeObject) => KubeObject) => ({ transform, metadataOnly: false, resource: 'pods', interner: undefined });
    for (const transform of [(o: KubeObject) => o, (o: KubeObject) => ({ ...o, spec: { x: 2 } })]) {
      const view = compactCodec(transform).item(Buffer.from(text)) as KubeObject;
      const shaped = shapeObject(sink(transform), view, 'watch');
      if (!('object' in shaped)) throw new Error('the transform failed');
      const read = readable(shaped.object);
      expect(Object.isFrozen(read.metadata), String(transform)).to.equal(true);
      expect(() => ((read.metadata as { name: string }).name = 'b')).to.throw(TypeError);
    }
  });

  it('decodes bookmarks, errors and what is not an object as JSON.parse does', () => {
    const c = codec();
    for (const text of ['{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"5"}}}', '{"type":"ERROR","object":{"code":410}}', '{"type":"MODIFIED","object":7}', '[1]', '"x"']) {
      const got = c.line(Buffer.from(text), 0, text.length);
      expect(compactRecordOf((got as { object?: unknown }).object), text).to.equal(undefined);
      expect(got).to.deep.equal(JSON.parse(text));
    }
    expect(c.item(Buffer.from(' 5 '))).to.equal(5);
  });

  it('reports a malformed line or item as the reader reports one JSON.parse rejects, without throwing', () => {
    const c = codec();
    const malformed: MalformedWatchLineError[] = [];
    const events: WatchLine[] = [];
    const reader = new WatchLineReader((e) => events.push(e), (e) => malformed.push(e), Infinity, () => {}, (buf, start, end) => c.line(buf, start, end));
    reader.push(Buffer.from('{"type":"MODIFIED","object":{"metadata":{"name":"a"}\n'));
    reader.push(Buffer.from('{"type":"MODIFIED","object":{"metadata":{"name":"a" "b"}}}\n'));
    reader.push(Buffer.from('{"type":"MODIFIED","object":{"metadata":{"name":"ok"},"spec":{}}}\n'));
    expect(malformed.map((e) => e.reason)).to.deep.equal(['not JSON: the text ended before the object did', 'not JSON: expected "," or the end of an object at byte 24']);
    expect(malformed).to.have.length(2);
    for (const e of malformed) expect(e).to.be.instanceOf(MalformedWatchLineError);
    expect([malformed[0]?.offset, malformed[0]?.length]).to.deep.equal([0, '{"type":"MODIFIED","object":{"metadata":{"name":"a"}'.length]);
    expect(events.map((e) => (e.object as KubeObject).metadata.name)).to.deep.equal(['ok']);

    const items: unknown[] = [];
    const parser = new ListBodyParser({ item: (entry) => (items.push(entry), false), oversized: () => {} }, undefined, (bytes) => c.item(bytes));
    parser.push(Buffer.from('{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":tru}}]}'));
    expect(parser.end()).to.deep.equal({ error: 'an item is not JSON: not a JSON value at byte 20' });
    expect(items.map((i) => (i as KubeObject).metadata.name)).to.deep.equal(['a']);

    // A raw control character in a string is not JSON, in apiVersion, kind or type as anywhere.
    const before = malformed.length;
    reader.push(Buffer.from('{"type":"MODIFIED","object":{"apiVersion":"v\u0001","metadata":{"name":"c"}}}\n'));
    reader.push(Buffer.from('{"object":{"metadata":{"name":"d"}},"type":"MODIFIED\u0001"}\n'));
    reader.push(Buffer.from('{"type":"MODIFIED","object":{"metadata":{"name":"ok2"},"spec":{}}}\n'));
    expect(malformed.slice(before).map((e) => e.reason)).to.have.length(2);
    for (const e of malformed.slice(before)) expect(e.reason).to.match(/^not JSON: .*control character/i);
    expect(events.map((e) => (e.object as KubeObject).metadata.name)).to.deep.equal(['ok', 'ok2']);
    const kinds: unknown[] = [];
    const kindParser = new ListBodyParser({ item: (entry) => (kinds.push(entry), false), oversized: () => {} }, undefined, (bytes) => c.item(bytes));
    kindParser.push(Buffer.from('{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[{"kind":"Pod\u0001","metadata":{"name":"e"}}]}'));
    expect(kindParser.end()).to.have.property('error').that.matches(/^an item is not JSON: .*control character/i);
    expect(kinds).to.deep.equal([]);
  });

  it('keeps a watch object past its metadata unread until it is read, and says whose body is broken when it is', () => {
    const c = codec();
    const text = '{"type":"MODIFIED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a","namespace":"ns"},"spec":{"x":tru}}}';
    const { object } = c.line(Buffer.from(text), 0, text.length) as { object: KubeObject & { spec?: unknown } };
    expect(object.metadata.name).to.equal('a');
    expect(() => object.spec).to.throw(SyntaxError, 'the cached object ns/a cannot be decoded');
    // A list item likewise (the list parser balanced its brackets and strings).
    const item = c.item(Buffer.from('{"metadata":{"name":"b"},"spec":{"x":[1,]}}')) as KubeObject & { spec?: unknown };
    expect(item.metadata.name).to.equal('b');
    expect(() => item.spec).to.throw(SyntaxError, 'the cached object /b cannot be decoded');
    // But what the tail could hide an apiVersion or kind in is read whole.
    expect(() => c.item(Buffer.from('{"metadata":{"name":"b"},"spec":{"x":[1,]},"kind":"K"}'))).to.throw(SyntaxError, 'not a JSON value');
  });

  it('never decodes the body for deltas(), the store indexes, predicates on metadata or owner mapping', () => {
    // Every body here is not JSON: a decode anywhere would throw.
    const c = codec();
    const pod = (name: string, rv: number, app: string) => {
      const line = Buffer.from(`{"type":"MODIFIED","object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"${name}","namespace":"ns","uid":"u-${name}","resourceVersion":"${rv}","generation":${rv},"labels":{"app":"${app}"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"rs-1","controller":true}]},"spec":{not json}}}`);
      return c.line(line, 0, line.length) as { object: KubeObject };
    };
    const input = new Subject<ListWatchEvent>();
    const out: StoreEvent[] = [];
    const owners: string[] = [];
    const changed: string[] = [];
    input.pipe(deltas(), indexer({ indexers: { app: byLabel('app'), owner: byOwnerUid } })).subscribe((e) => out.push(e));
    input.pipe(deltas(), filterDeltas(or(generationChanged, labelsChanged, annotationsChanged, resourceVersionChanged))).subscribe((d) => 'key' in d && changed.push(d.key));
    input.pipe(deltas(), mapToOwners({ group: 'apps', kind: 'ReplicaSet' })).subscribe((k) => owners.push(k));
    input.next({ type: 'Restart' });
    input.next({ type: 'Listed', object: pod('a', 1, 'web').object });
    input.next({ type: 'Synced', resourceVersion: '1' });
    input.next({ type: 'Modified', object: pod('a', 2, 'db').object });
    input.next({ type: 'Added', object: pod('b', 3, 'db').object });
    input.next({ type: 'Deleted', object: pod('a', 4, 'db').object });
    const store = out.at(-1)?.store;
    expect(store?.indexKeys('app', 'db')).to.deep.equal(['ns/b']);
    expect(store?.indexKeys('owner', 'rs-1')).to.deep.equal(['ns/b']);
    expect(changed).to.deep.equal(['ns/a', 'ns/a', 'ns/b', 'ns/a']);
    expect(owners.length).to.be.greaterThan(0);
    expect(owners.every((k) => k === 'ns/rs')).to.equal(true);
    // Reading the object is where the body is decoded, and found broken.
    expect(() => store?.get('ns/b')).to.throw(SyntaxError, 'ns/b cannot be decoded');
  });

  it('keeps bodies in slabs once objects are released, and reads them, current or released, as JSON.parse does (property)', () => {
    const c = codec();
    const first = c.item(Buffer.from('{"metadata":{"name":"first"},"spec":{"a":1}}'));
    expect(compactRecordOf(first)?.body, 'a string until a release says the cache keeps count').to.be.a('string');
    releaseCompact(first);
    expect(c.shared.slabs.active).to.equal(true);
    expectReadsAs(first, { metadata: { name: 'first' }, spec: { a: 1 } });
    const read: [unknown, Plain][] = [];
    fc.assert(
      fc.property(kubeObject, fc.boolean(), (object, release) => {
        const text = JSON.stringify(object);
        const expected = JSON.parse(text) as Plain;
        const line = Buffer.from(`{"type":"MODIFIED","object":${text}}`);
        for (const view of [c.item(Buffer.from(text)), (c.line(line, 0, line.length) as WatchLine).object]) {
          const hasBody = Object.keys(expected).some((k) => k !== 'apiVersion' && k !== 'kind' && k !== 'metadata');
          if (hasBody) expect(Buffer.isBuffer(compactRecordOf(view)?.body), 'a body in a slab').to.equal(true);
          if (release) releaseCompact(view);
          expectReadsAs(view, expected);
          read.push([view, expected]);
        }
      }),
      { numRuns: 300 },
    );
    // Read again after everything since: slabs are written once, whatever was released.
    for (const [view, expected] of read) expect(readable(view as KubeObject)).to.deep.equal(expected);
  });

  it('moves the bodies of objects still current out of slabs that replaced ones left, and they read as before (deltas() releases what it replaces)', () => {
    const c = codec();
    const spec = (n: number) => ({ containers: [{ name: 'app', image: `registry.example/app:${n}`, args: ['x'.repeat(900)] }] });
    const line = (name: string, rv: number) => {
      const text = `{"type":"MODIFIED","object":${JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'ns', uid: `u-${name}`, resourceVersion: String(rv) }, spec: spec(rv) })}}`;
      return (c.line(Buffer.from(text), 0, text.length) as WatchLine).object as KubeObject;
    };
    // Active from the start (as on a re-list): the listed bodies are in slabs too.
    releaseCompact(line('warm-up', 0));
    const input = new Subject<ListWatchEvent>();
    const deltasSeen: Delta[] = [];
    input.pipe(deltas()).subscribe((d) => 'key' in d && deltasSeen.push(d));
    input.next({ type: 'Restart' });
    // One cold pod in every ten; the hot ones are updated again and again.
    let rv = 0;
    for (let i = 0; i < 2_000; i++) input.next({ type: 'Listed', object: line(`p-${i}`, ++rv) });
    input.next({ type: 'Synced', resourceVersion: String(rv) });
    for (let round = 0; round < 4; round++) {
      for (let i = 0; i < 2_000; i++) if (i % 10 !== 0) input.next({ type: 'Modified', object: line(`p-${i}`, ++rv) });
    }
    const slabs = c.shared.slabs;
    expect(slabs.moved, 'bodies moved').to.be.greaterThan(0);
    expect(slabs.heldBytes).to.be.at.most(slabs.liveBytes * (4 / 3) + SLACK + 2 * SLAB_BYTES);
    // The newest object of each key reads as the server sent it, and so does every one it replaced.
    const newest = new Map<string, Delta>();
    for (const d of deltasSeen) newest.set(d.key, d);
    for (const d of newest.values()) expect((readable(d.object) as unknown as { spec: unknown }).spec).to.deep.equal(spec(Number(d.object.metadata.resourceVersion)));
    for (const d of deltasSeen.filter((_, i) => i % 97 === 0)) {
      if (d.old !== undefined) expect((readable(d.old) as unknown as { spec: unknown }).spec).to.deep.equal(spec(Number(d.old.metadata.resourceVersion)));
    }
  });

  it('keeps the bodies of a list in slabs from the second object deltas() holds: it will release them, so their source may', () => {
    const c = codec();
    const item = (name: string) => c.item(Buffer.from(JSON.stringify({ metadata: { name, resourceVersion: '1' }, spec: { name } }))) as KubeObject;
    const input = new Subject<ListWatchEvent>();
    input.pipe(deltas()).subscribe();
    input.next({ type: 'Restart' });
    const first = item('a');
    input.next({ type: 'Listed', object: first });
    const second = item('b');
    input.next({ type: 'Listed', object: second });
    expect(typeof compactRecordOf(first)?.body).to.equal('string');
    expect(Buffer.isBuffer(compactRecordOf(second)?.body)).to.equal(true);
    expect(readable(second)).to.deep.equal({ metadata: { name: 'b', resourceVersion: '1' }, spec: { name: 'b' } });
    // Without deltas(), nothing says which objects are current: no slab.
    const alone = codec();
    alone.item(Buffer.from('{"metadata":{"name":"a"},"spec":{}}'));
    expect(typeof compactRecordOf(alone.item(Buffer.from('{"metadata":{"name":"b"},"spec":{}}')))?.body).to.equal('string');
  });

  it('deltas() releases each object it stops holding: replaced, deleted (and the final state), gone in a re-list, unkeyable', () => {
    const c = codec();
    const view = (name: string, rv: number) => c.item(Buffer.from(JSON.stringify({ metadata: { ...(name === '' ? {} : { name }), namespace: 'ns', uid: `u-${name}`, resourceVersion: String(rv) }, spec: { rv } }))) as KubeObject;
    // The first release makes the slabs active; the objects after it keep their bodies there.
    releaseCompact(view('warm-up', 0));
    const counted = (object: KubeObject) => compactRecordOf(object)?.slab !== undefined;
    const input = new Subject<ListWatchEvent>();
    input.pipe(deltas()).subscribe();
    const [a1, b1, c1] = [view('a', 1), view('b', 2), view('c', 3)];
    input.next({ type: 'Restart' });
    for (const o of [a1, b1, c1]) input.next({ type: 'Listed', object: o });
    input.next({ type: 'Synced', resourceVersion: '3' });
    expect([a1, b1, c1].map(counted)).to.deep.equal([true, true, true]);
    const a2 = view('a', 4);
    input.next({ type: 'Modified', object: a2 });
    expect([counted(a1), counted(a2)], 'replaced, and its replacement').to.deep.equal([false, true]);
    const bFinal = view('b', 5);
    input.next({ type: 'Deleted', object: bFinal });
    expect([counted(b1), counted(bFinal)], 'deleted, and its final state').to.deep.equal([false, false]);
    const never = view('never', 6);
    input.next({ type: 'Deleted', object: never });
    expect(counted(never), 'a delete of a key never seen').to.equal(false);
    const unkeyable = view('', 7);
    input.next({ type: 'Added', object: unkeyable });
    expect(counted(unkeyable), 'an object that cannot be keyed').to.equal(false);
    // A re-list that names a2 again (the same object) and not c1.
    input.next({ type: 'Restart' });
    input.next({ type: 'Listed', object: a2 });
    input.next({ type: 'Synced', resourceVersion: '8' });
    expect([counted(a2), counted(c1)], 're-listed as it was, and gone in the re-list').to.deep.equal([true, false]);
    expect(c.shared.slabs.liveBytes).to.equal(compactRecordOf(a2)?.length);
    // Released or not, each reads as it was.
    expect((readable(c1) as unknown as { spec: unknown }).spec).to.deep.equal({ rv: 3 });
    expect((readable(bFinal) as unknown as { spec: unknown }).spec).to.deep.equal({ rv: 5 });
  });
});
