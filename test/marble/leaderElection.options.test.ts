import { expect } from 'chai';
import { KubeConfig } from '@kubernetes/client-node';
import { leaderElection } from 'rxkube';
import { type LeaderElectionOptions, LeaderElectionConfigError } from '../../src/sinks/leader/leaderElection.js';
import { inMemoryLeaseClient } from 'rxkube/testing';

const client = inMemoryLeaseClient();
const base: LeaderElectionOptions = { client, lease: 'default/lock', identity: 'a' };

function rejects(options: Partial<LeaderElectionOptions>, message: RegExp): void {
  expect(() => leaderElection({ ...base, ...options } as LeaderElectionOptions))
    .to.throw(LeaderElectionConfigError)
    .with.property('message')
    .that.matches(message);
}

describe('leaderElection: options', () => {
  it('accepts client-go’s defaults and builds a cold Observable', () => {
    expect(() => leaderElection(base)).to.not.throw();
    expect(client.calls).to.deep.equal({ get: 0, create: 0, update: 0 });
  });

  it('requires the lease as "namespace/name"', () => {
    rejects({ lease: '' }, /lease is required, as "namespace\/name"/);
    rejects({ lease: 'lock' }, /lease "lock" has no namespace: Leases are namespaced, write "namespace\/lock"/);
    rejects({ lease: 'a/b/c' }, /lease "a\/b\/c" is not of the form "namespace\/name"/);
    rejects({ lease: '/lock' }, /lease "\/lock" is not of the form/);
  });

  it('requires an identity', () => {
    rejects({ identity: '' }, /identity is required/);
  });

  it('requires leaseDuration > renewDeadline > retryPeriod × 1.2, as client-go’s NewLeaderElector', () => {
    rejects({ leaseDuration: 10_000 }, /leaseDuration \(10000 ms\) must be greater than renewDeadline \(10000 ms\)/);
    rejects({ retryPeriod: 9_000 }, /renewDeadline \(10000 ms\) must be greater than retryPeriod × 1\.2 \(10800 ms\)/);
    rejects({ renewDeadline: 2_400 }, /renewDeadline \(2400 ms\) must be greater than retryPeriod × 1\.2 \(2400 ms\)/);
    expect(() => leaderElection({ ...base, renewDeadline: 2_401 })).to.not.throw();
  });

  it('requires positive durations and a whole number of seconds for the lease', () => {
    rejects({ retryPeriod: 0 }, /retryPeriod must be a positive number of ms, got 0/);
    rejects({ renewDeadline: -1 }, /renewDeadline must be a positive number of ms, got -1/);
    rejects({ leaseDuration: Number.NaN }, /leaseDuration must be a positive number of ms, got NaN/);
    rejects({ leaseDuration: 15_500 }, /leaseDuration must be a whole number of seconds .* got 15500 ms/);
  });

  it('needs a kubeConfig or a client', () => {
    rejects({ client: undefined }, /pass a kubeConfig, or a client for the lease/);
    rejects({ client: undefined, kubeConfig: new KubeConfig() }, /cannot use the kubeConfig: the kubeconfig has no current cluster/);
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:6443', skipTLSVerify: false }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    expect(() => leaderElection({ ...base, client: undefined, kubeConfig })).to.not.throw();
  });
});
