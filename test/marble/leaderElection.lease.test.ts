import { expect } from 'chai';
import { leaderElectionRecord, leaseFree, leaseValid, observeLease, type Lease } from '../../src/sinks/leader/leaseRecord.js';
import { kubeMicroTime } from '../../src/util/time.js';
import { heldBy } from './leaderElection.support.js';

const withVersion = (lease: Lease, resourceVersion: string): Lease => ({
  ...lease,
  metadata: { ...lease.metadata, resourceVersion },
});

describe('leaderElection: the observed lease', () => {
  it('writes MicroTime with exactly six fractional digits, as the API server parses it', () => {
    expect(kubeMicroTime(0)).to.equal('1970-01-01T00:00:00.000000Z');
    expect(kubeMicroTime(Date.UTC(2024, 4, 1, 10, 0, 7, 123))).to.equal('2024-05-01T10:00:07.123000Z');
    expect(kubeMicroTime(1.5)).to.equal('1970-01-01T00:00:00.001500Z');
  });

  it('reads absent fields as their zero values', () => {
    expect(leaderElectionRecord({ metadata: { name: 'lock' } })).to.deep.equal({
      holderIdentity: '',
      leaseDurationSeconds: 0,
      acquireTime: '',
      renewTime: '',
      leaderTransitions: 0,
      strategy: '',
      preferredHolder: '',
    });
  });

  it('keeps the observed time while the record is unchanged, even when the resourceVersion moves', () => {
    const first = observeLease(undefined, withVersion(heldBy('x'), '1'), 100);
    const again = observeLease(first, withVersion(heldBy('x'), '2'), 5_000);
    expect(again.observedTime).to.equal(100);
    expect(again.lease.metadata.resourceVersion).to.equal('2');
    const renewed = observeLease(again, heldBy('x', { renewTime: '2024-05-01T10:00:02.000000Z' }), 6_000);
    expect(renewed.observedTime).to.equal(6_000);
  });

  it('judges validity from the observed time plus leaseDurationSeconds, ignoring renewTime', () => {
    const seen = observeLease(undefined, heldBy('x', { renewTime: '1999-01-01T00:00:00.000000Z' }), 1_000);
    expect(leaseValid(seen, 15_999)).to.equal(true);
    expect(leaseValid(seen, 16_000)).to.equal(false);
    expect(leaseFree(seen, 15_999)).to.equal(false);
    expect(leaseFree(seen, 16_000)).to.equal(true);
  });

  it('calls a lease without a holder free at once', () => {
    const seen = observeLease(undefined, heldBy(''), 1_000);
    expect(leaseValid(seen, 1_000)).to.equal(true);
    expect(leaseFree(seen, 1_000)).to.equal(true);
  });
});
