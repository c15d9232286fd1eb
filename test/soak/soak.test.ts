import { expect } from 'chai';
import { shortSoakOptions } from '../../soak/shortForm.js';
import { formatReport } from '../../soak/printReport.js';
import { runSoak } from '../../soak/soak.js';
import { replay, testSeed } from '../support/seed.js';

describe('soak, short form: three controllers sharing informers, a leader-elected replica set, one controller over two clusters and a steady workload, under injected faults', function () {
  // A guard against a hang, not a timing assertion: the run takes about a minute (longer on a busy machine).
  this.timeout(480_000);

  it('violates no invariant: one run per key at a time, convergence after the faults, stores equal to the server, no stray error, no heap growth, one leader at a time', async () => {
    const seed = testSeed;
    const lines: string[] = [];
    const report = await runSoak(shortSoakOptions(seed, (line) => lines.push(line)));
    const explain = `${replay}, or runSoak(shortSoakOptions(${seed}))\n${lines.join('\n')}\n${formatReport(report)}`;

    expect(report.violations.samples, explain).to.deep.equal([]);
    expect(report.violations.total, explain).to.equal(0);
    expect(report.rounds.map((r) => r.convergedMs !== undefined && r.storesMatchedMs !== undefined), explain).to.deep.equal([true, true]);

    // It did what a soak must do, or its zero would mean nothing.
    for (const name of ['podautoscaler', 'configmap-rollout', 'mirror']) {
      expect(report.reconciles.byController[name]?.results.success ?? 0, `${name} reconciled: ${explain}`).to.be.greaterThan(100);
      expect(report.reconciles.byController[name]?.errors.injected ?? 0, `${name} met injected failures: ${explain}`).to.be.greaterThan(0);
    }
    for (const kind of ['drop-watches', 'close-watches', 'compact', 'burst-429', 'burst-500', 'latency', 'malformed-line', 'silence']) {
      expect(report.faults.injected[kind] ?? 0, `${kind} injected: ${explain}`).to.be.greaterThan(0);
    }
    expect(report.workload.http, explain).to.be.greaterThan(1_000);
    expect(report.workload.local, explain).to.be.greaterThan(1_000);
    expect(report.workload.freshNames, `fresh names, so that a leak per key keeps growing: ${explain}`).to.be.greaterThan(200);
    expect(report.sources.watchRequests, `watches reopened: ${explain}`).to.be.greaterThan(3);
    expect(report.leader?.takeovers ?? 0, `a failover: ${explain}`).to.be.greaterThan(0);
    expect(Object.values(report.leader?.reconcilesByReplica ?? {}).filter((n) => n > 0).length, `two replicas reconciled: ${explain}`).to.be.at.least(2);
    expect(report.fleet?.leaves ?? 0, `a cluster left and joined again: ${explain}`).to.be.greaterThan(0);
    for (const cluster of ['east', 'west']) expect(report.fleet?.reconcilesByCluster[cluster] ?? 0, `the fleet reconciled ${cluster}: ${explain}`).to.be.greaterThan(100);
    expect(report.memory.growthPercent, `heap compared: ${explain}`).to.be.a('number');
    expect(report.passed, explain).to.equal(true);
  });
});
