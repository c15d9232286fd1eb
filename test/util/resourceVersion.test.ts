import { expect } from 'chai';
import { compareResourceVersions, reachedResourceVersion } from '../../src/util/resourceVersion.js';

describe('compareResourceVersions (KEP-5504)', () => {
  it('orders decimal integers by value, the longer being the larger, whatever their size', () => {
    expect(compareResourceVersions('9', '10')).to.equal(-1);
    expect(compareResourceVersions('10', '9')).to.equal(1);
    expect(compareResourceVersions('123', '124')).to.equal(-1);
    expect(compareResourceVersions('99999999999999999999999', '100000000000000000000000')).to.equal(-1);
    expect(compareResourceVersions('42', '42')).to.equal(0);
  });

  it('says nothing of what is not a canonical integer (a leading zero, a sign, letters, empty), unless equal', () => {
    for (const [a, b] of [['010', '9'], ['-1', '2'], ['abc', '1'], ['', '1'], ['1.5', '2'], ['1e3', '2']]) {
      expect(compareResourceVersions(a as string, b as string), `${a} vs ${b}`).to.equal(undefined);
    }
    expect(compareResourceVersions('opaque-7', 'opaque-7')).to.equal(0);
  });

  it('reachedResourceVersion: equal or later', () => {
    expect(reachedResourceVersion('10', '9')).to.equal(true);
    expect(reachedResourceVersion('9', '9')).to.equal(true);
    expect(reachedResourceVersion('8', '9')).to.equal(false);
    expect(reachedResourceVersion('x', 'y')).to.equal(false);
    expect(reachedResourceVersion(undefined, '1')).to.equal(false);
  });
});
