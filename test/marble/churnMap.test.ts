import { expect } from 'chai';
import fc from 'fast-check';
import { ChurnMap } from '../../src/operators/churnMap.js';

describe('ChurnMap: a Map for keys that come and go, which never empties its own table', () => {
  it('answers as a Map does through any sequence of sets, deletes and clears (property)', () => {
    const step = fc.oneof(
      fc.record({ op: fc.constant('set' as const), key: fc.constantFrom('', 'a', 'b', 'c', 'team/web-1'), value: fc.integer() }),
      fc.record({ op: fc.constant('delete' as const), key: fc.constantFrom('', 'a', 'b', 'c', 'team/web-1') }),
      fc.record({ op: fc.constant('clear' as const) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        const churn = new ChurnMap<number>();
        const map = new Map<string, number>();
        for (const s of steps) {
          if (s.op === 'set') {
            churn.set(s.key, s.value);
            map.set(s.key, s.value);
          } else if (s.op === 'delete') {
            expect(churn.delete(s.key)).to.equal(map.delete(s.key));
          } else {
            churn.clear();
            map.clear();
          }
          expect(churn.size).to.equal(map.size);
          expect([...churn.values()]).to.deep.equal([...map.values()]);
          for (const key of ['', 'a', 'b', 'c', 'team/web-1']) expect(churn.get(key)).to.equal(map.get(key));
        }
      }),
      { numRuns: 500 },
    );
  });

  it('is empty to its caller when new and after its last key goes', () => {
    const churn = new ChurnMap<string>();
    expect(churn.size).to.equal(0);
    expect([...churn.values()]).to.deep.equal([]);
    churn.set('k', 'v');
    churn.delete('k');
    expect(churn.size).to.equal(0);
    expect([...churn.values()]).to.deep.equal([]);
  });
});
