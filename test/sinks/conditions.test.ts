import { expect } from 'chai';
import fc from 'fast-check';
import { findCondition, setCondition, type Condition } from 'rxkube';
import { kubeTime } from '../../src/util/time.js';
import { isConditionFalse, isConditionTrue, removeCondition, type ConditionStatus } from '../../src/sinks/objects/conditions.js';

const t0 = new Date('2024-05-01T10:00:00.123Z');
const t1 = new Date('2024-05-01T11:30:00.999Z');

describe('conditions', () => {
  it('adds a missing condition dated now, in whole seconds as kube writes metav1.Time', () => {
    const conditions = setCondition(undefined, { type: 'Ready', status: 'True', reason: 'Up', message: 'all good', observedGeneration: 3 }, t0);
    expect(conditions).to.deep.equal([
      { type: 'Ready', status: 'True', reason: 'Up', message: 'all good', observedGeneration: 3, lastTransitionTime: '2024-05-01T10:00:00Z' },
    ]);
  });

  it('keeps lastTransitionTime when the status stays the same but reason and message change', () => {
    const before = setCondition([], { type: 'Ready', status: 'False', reason: 'Pending', message: 'waiting' }, t0);
    const after = setCondition(before, { type: 'Ready', status: 'False', reason: 'Scaling', message: 'two of three', observedGeneration: 2 }, t1);
    expect(after).to.deep.equal([
      { type: 'Ready', status: 'False', reason: 'Scaling', message: 'two of three', observedGeneration: 2, lastTransitionTime: '2024-05-01T10:00:00Z' },
    ]);
  });

  it('moves lastTransitionTime to now when the status changes', () => {
    const before = setCondition([], { type: 'Ready', status: 'False', reason: 'Pending' }, t0);
    const after = setCondition(before, { type: 'Ready', status: 'True', reason: 'Up' }, t1);
    expect(after[0]?.lastTransitionTime).to.equal('2024-05-01T11:30:00Z');
    expect(after[0]?.status).to.equal('True');
  });

  it('returns the same array when nothing changed, so callers can skip the write', () => {
    const before = setCondition([], { type: 'Ready', status: 'True', reason: 'Up', message: 'm' }, t0);
    expect(setCondition(before, { type: 'Ready', status: 'True', reason: 'Up', message: 'm' }, t1)).to.equal(before);
  });

  it('never changes the array or the conditions it is given', () => {
    const other: Condition = { type: 'Synced', status: 'True', lastTransitionTime: '2024-01-01T00:00:00Z' };
    const before: Condition[] = [other, { type: 'Ready', status: 'False', lastTransitionTime: '2024-01-01T00:00:00Z' }];
    const frozen = JSON.stringify(before);
    const after = setCondition(before, { type: 'Ready', status: 'True' }, t1);
    expect(JSON.stringify(before)).to.equal(frozen);
    expect(after).to.not.equal(before);
    expect(after[0]).to.equal(other);
    expect(after.map((c) => c.type)).to.deep.equal(['Synced', 'Ready']);
  });

  it('refuses a condition without a type or with a status other than True, False, Unknown, naming it', () => {
    expect(() => setCondition([], { type: '', status: 'True' })).to.throw(TypeError, /non-empty "type"/);
    expect(() => setCondition([], { type: 'Ready', status: 'true' as ConditionStatus })).to.throw(
      TypeError,
      /condition "Ready" has status "true"; expected "True", "False" or "Unknown"/,
    );
    expect(() => setCondition([], { type: 'Ready', status: 'True', observedGeneration: 1.5 })).to.throw(TypeError, /observedGeneration 1.5/);
  });

  it('finds, tests and removes conditions by type', () => {
    let conditions = setCondition([], { type: 'Ready', status: 'True' }, t0);
    conditions = setCondition(conditions, { type: 'Degraded', status: 'False' }, t0);
    expect(findCondition(conditions, 'Ready')?.status).to.equal('True');
    expect(isConditionTrue(conditions, 'Ready')).to.equal(true);
    expect(isConditionFalse(conditions, 'Degraded')).to.equal(true);
    expect(isConditionTrue(conditions, 'Missing')).to.equal(false);
    expect(isConditionFalse(conditions, 'Missing')).to.equal(false);
    const removed = removeCondition(conditions, 'Ready');
    expect(removed.map((c) => c.type)).to.deep.equal(['Degraded']);
    expect(removeCondition(removed, 'Ready')).to.equal(removed);
    expect(findCondition(undefined, 'Ready')).to.equal(undefined);
  });

  it('formats times as RFC 3339 UTC seconds and rejects an invalid date', () => {
    expect(kubeTime(t1)).to.equal('2024-05-01T11:30:00Z');
    expect(() => kubeTime(new Date('nope'))).to.throw(TypeError, /valid Date/);
  });

  it('moves lastTransitionTime exactly when the status differs from the one before, over any sequence', () => {
    const status = fc.constantFrom<ConditionStatus>('True', 'False', 'Unknown');
    fc.assert(
      fc.property(fc.array(fc.tuple(status, fc.constantFrom('a', 'b')), { minLength: 1, maxLength: 30 }), (steps) => {
        let conditions: Condition[] = [];
        let previous: ConditionStatus | undefined;
        let lastChange = -1;
        steps.forEach(([s, reason], i) => {
          const now = new Date(Date.UTC(2024, 0, 1, 0, 0, i));
          conditions = setCondition(conditions, { type: 'Ready', status: s, reason }, now);
          if (s !== previous) lastChange = i;
          previous = s;
          expect(conditions).to.have.length(1);
          expect(conditions[0]?.lastTransitionTime).to.equal(kubeTime(new Date(Date.UTC(2024, 0, 1, 0, 0, lastChange))));
        });
      }),
    );
  });
});
