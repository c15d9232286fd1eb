import { createRequire } from 'node:module';
import { expect } from 'chai';

const { totalsLine } = createRequire(import.meta.url)('./support/totals-reporter.cjs') as {
  totalsLine: (stats: { passes: number; failures: number; pending: number }) => string;
};

describe('the totals line CI reads', () => {
  it('is exactly "N passed, N failed" when nothing was skipped', () => {
    expect(totalsLine({ passes: 977, failures: 0, pending: 0 })).to.equal('977 passed, 0 failed');
  });

  it('says how many were skipped when any test was pending', () => {
    expect(totalsLine({ passes: 960, failures: 1, pending: 17 })).to.equal('960 passed, 1 failed, 17 skipped');
  });
});
