import { AssertionError } from 'node:assert';
import { expect } from 'chai';
import { expectTimeline, matchesPattern, projectOnto, renderValue, type Timeline, type TimelineView } from 'rxkube/testing';

const at = <T>(frame: number, value: T) => ({ frame, notification: { kind: 'N' as const, value } });

interface Thing {
  id: string;
  size: number;
  tags?: string[];
}
const view: TimelineView<Thing> = { name: 'things', short: (t) => `${t.id}/${t.size}`, full: (t) => `${t.id}/${t.size} tagged ${t.tags?.join(',') ?? 'nothing'}` };

function failure(fn: () => void): AssertionError {
  try {
    fn();
  } catch (err) {
    if (err instanceof AssertionError) return err;
    throw err;
  }
  throw new Error('expected an AssertionError');
}

describe('patterns of rxkube/testing expectations', () => {
  it('match an object that has at least the fields they name, at any depth', () => {
    expect(matchesPattern({ a: 1, b: { c: 2, d: 3 } }, { b: { c: 2 } })).to.equal(true);
    expect(matchesPattern({ a: 1, b: { c: 2 } }, { b: { c: 3 } })).to.equal(false);
    expect(matchesPattern({ a: 1 }, { a: 1, b: undefined })).to.equal(true);
    expect(matchesPattern({ a: 1, b: 2 }, { b: undefined })).to.equal(false);
  });

  it('match arrays item by item and only at the same length', () => {
    expect(matchesPattern([{ a: 1, b: 2 }], [{ a: 1 }])).to.equal(true);
    expect(matchesPattern([{ a: 1 }, { a: 2 }], [{ a: 1 }])).to.equal(false);
  });

  it('match strings and error messages with a RegExp, instances with a class, errors by name and message', () => {
    expect(matchesPattern('deployment "web" not found', /not found/)).to.equal(true);
    expect(matchesPattern(new Error('409 Conflict'), /Conflict/)).to.equal(true);
    expect(matchesPattern(new RangeError('x'), RangeError)).to.equal(true);
    expect(matchesPattern(new Error('x'), RangeError)).to.equal(false);
    expect(matchesPattern(new TypeError('bad'), new TypeError('bad'))).to.equal(true);
    expect(matchesPattern(new TypeError('bad'), new Error('bad'))).to.equal(false);
  });

  it('show a value through a pattern: only the named fields, so that only differences differ', () => {
    expect(projectOnto({ id: 'a', size: 2, extra: true }, { id: 'a', size: 3 })).to.deep.equal({ id: 'a', size: 2 });
    expect(renderValue({ id: 'a', list: [1, 'x'], err: new Error('boom'), re: /x/, cls: RangeError })).to.equal(
      '{ id: "a", list: [1, "x"], err: Error("boom"), re: /x/, cls: <RangeError> }',
    );
  });
});

describe('expectTimeline', () => {
  const actual: Timeline<Thing> = [at(0, { id: 'a', size: 1 }), at(5, { id: 'b', size: 2, tags: ['x'] })];

  it('passes when every notification comes at its frame and matches its pattern or short form', () => {
    expectTimeline(actual, 'a 4ms b', { a: 'a/1', b: { id: 'b', tags: ['x'] } }, undefined, view);
  });

  it('fails on a value at another frame, listing both timelines (the late value read through its pattern) in the message and for a diff', () => {
    const err = failure(() => expectTimeline(actual, 'a 3ms b', { a: 'a/1', b: 'b/2' }, undefined, view));
    expect(err.message).to.equal(
      "things do not match the marble diagram 'a 3ms b'\n  expected:\n    0ms  a/1\n    4ms  b/2\n  actual:\n    0ms  a/1\n    5ms  b/2",
    );
    expect(err.expected).to.equal('    0ms  a/1\n    4ms  b/2');
    expect(err.actual).to.equal('    0ms  a/1\n    5ms  b/2');
  });

  it('shows a mismatching value through its pattern, so the differing field stands out', () => {
    const err = failure(() => expectTimeline(actual, 'a 4ms b', { a: 'a/1', b: { id: 'b', size: 3 } }, undefined, view));
    expect(err.actual).to.equal('    0ms  a/1\n    5ms  { id: "b", size: 2 }');
    expect(err.expected).to.equal('    0ms  a/1\n    5ms  { id: "b", size: 3 }');
  });

  it('matches an error at "#" with the given pattern, or any error without one, and completion at "|"', () => {
    const failed: Timeline<Thing> = [{ frame: 2, notification: { kind: 'E', error: new Error('watch closed') } }];
    expectTimeline(failed, '--#', undefined, undefined, view);
    expectTimeline(failed, '--#', undefined, /closed/, view);
    expect(() => expectTimeline(failed, '--#', undefined, /expired/, view)).to.throw(AssertionError);
    expectTimeline<Thing>([{ frame: 3, notification: { kind: 'C' } }], '---|', undefined, undefined, view);
  });

  it('fails on a notification the diagram does not have, and names the empty side', () => {
    const err = failure(() => expectTimeline(actual, '', undefined, undefined, view));
    expect(err.expected).to.equal('  (nothing)');
  });
});
