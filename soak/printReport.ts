import type { SoakReport } from './report.js';
import type { Distribution } from './stats.js';

const ms = (d: Distribution) => `median ${Math.round(d.median)} ms, p99 ${Math.round(d.p99)} ms, worst ${Math.round(d.worst)} ms (${d.count})`;
const counts = (r: Record<string, number>) =>
  Object.entries(r)
    .sort(([, a], [, b]) => b - a)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || 'none';

/** The report as the lines a person reads at the end of a run. */
export function formatReport(report: SoakReport, file?: string): string {
  const lines: string[] = [];
  const add = (line = '') => lines.push(line);
  add(`rxkube soak: ${report.seconds} s, seed ${report.seed}, ${report.machine.cpus} cpus, node ${report.machine.node}`);
  add();
  add(`workload     ${report.workload.operations} operations (${report.workload.perSecond}/s while faults ran): ${report.workload.http} over HTTP, ${report.workload.local} in-process; ${report.workload.freshNames} fresh names; HTTP errors: ${counts(report.workload.httpErrors)}`);
  add(`faults       ${counts(report.faults.injected)} in ${report.faults.storms} storms; watches cut ${report.faults.watchesCut}, malformed lines ${report.faults.malformedLines}, requests armed to fail ${counts(report.faults.armedErrors)}`);
  add(`reconciles   ${report.reconciles.total} (${report.reconciles.perSecond}/s), retried ${report.reconciles.retries}`);
  for (const [name, c] of Object.entries(report.reconciles.byController)) {
    add(`  ${name.padEnd(26)} ${String(c.reconciles).padStart(8)}  ${counts(c.results)}; failures: ${counts(c.errors)}`);
  }
  const s = report.sources;
  add(`sources      re-lists ${counts(s.relists)}; watch restarts ${counts(s.watchRestarts)}; backoff retries ${counts(s.retries)}; list pages ${s.listRequests}, watches ${s.watchRequests}, events ${s.events}`);
  add(`events       ${Object.entries(report.recorders).map(([n, r]) => `${n}: created ${r.created}, patched ${r.patched}, failed ${r.failed}, dropped ${r.dropped}`).join('; ')}`);
  add(`             watches open at the end ${report.openWatches}; Events expired by the TTL stand-in ${report.expiredEvents}`);
  add(`convergence  while faulted: ${ms(report.convergence.duringFaults.all as Distribution)}`);
  for (const kind of ['mirror', 'autoscaler', 'rollout']) {
    const d = report.convergence.duringFaults[kind];
    if (d) add(`  ${kind.padEnd(12)} ${ms(d)}`);
  }
  add(`             after the faults stop: ${ms(report.convergence.afterFaults)}; bound ${report.bounds.convergenceMs} ms`);
  for (const r of report.rounds) {
    add(
      `  round ${r.round}: ${r.chaosSeconds} s of faults; converged ${r.convergedMs === undefined ? `NOT (${r.unconverged} left)` : `in ${r.convergedMs} ms`}, ` +
        `stores ${r.storesMatchedMs === undefined ? `DIFFER (${r.storeMismatches})` : `match at ${r.storesMatchedMs} ms`}; heap after GC ${r.heapAfterGcMB} MB; ` +
        `server holds ${counts(r.serverObjects)}; recorders hold ${r.recorderSeries} series; ${r.fds} fds, handles ${counts(r.handles)}`,
    );
  }
  if (report.leader) {
    const l = report.leader;
    add(
      `leader       ${l.replicas} replicas at ${l.factor}× time; leader paused ${l.pauses.hang + l.pauses.fail} times (${l.pauses.hang} hang, ${l.pauses.fail} fail); ` +
        `${l.takeovers} takeovers, gap ${ms(l.takeoverGapMs)} (replica clock; bound ${l.takeoverBoundMs} ms); ${l.termCount} terms; ` +
        `reconciles ${counts(l.reconcilesByReplica)}; seconds in terms ${counts(l.secondsByReplica)}`,
    );
  }
  if (report.shard) {
    const h = report.shard;
    add(
      `sharded      ${h.replicas} replicas at ${h.factor}× time; faults ${counts(h.faults)}; reconciles ${counts(h.reconcilesByReplica)}; ` +
        `handoffs ${Object.entries(h.handoffsByReplica).map(([who, x]) => `${who} +${x.gained}/-${x.released}`).join(', ')}; ` +
        `every slot owned ${h.ownedWithinMs.map((x) => `${x} ms`).join(', ') || '-'} after each calm began (bound ${h.ownershipBoundMs} replica ms)`,
    );
  }
  if (report.fleet) {
    const f = report.fleet;
    add(
      `clusters     one controller over ${f.clusters.join(' and ')}; west left ${f.leaves} times and joined again ${f.joins} times; ` +
        `reconciles ${counts(f.reconcilesByCluster)}; west's faults ${counts(f.westFaults.injected)}`,
    );
  }
  const m = report.memory;
  add(
    `memory       heap after GC ${m.baselineMB ?? '-'} MB (round ${m.baselineRound ?? '-'}) → ${m.finalMB ?? '-'} MB: ` +
      `${m.growthPercent === undefined ? 'NOT compared (one calm phase): not passed' : `${m.growthPercent > 0 ? '+' : ''}${m.growthPercent} %`} (limit ${m.limitPercent} %); ` +
      `peak RSS ${m.peakRssMB} MB; event loop delay p99 ${m.eventLoopDelayMs.p99} ms, max ${m.eventLoopDelayMs.max} ms`,
  );
  add(`  heap/RSS MB over time: ${m.samples.filter((_, i, all) => i % Math.ceil(all.length / 12) === 0 || i === all.length - 1).map((x) => `${x.t}s ${x.heapUsedMB}/${x.rssMB}`).join(' · ')}`);
  add();
  add('invariants');
  for (const [name, i] of Object.entries(report.invariants)) add(`  ${i.violations === 0 ? 'ok  ' : 'FAIL'} ${String(i.violations).padStart(5)}  ${name}: ${i.rule}`);
  for (const v of report.violations.samples) add(`  ! ${v.at}s ${v.invariant}: ${v.detail}`);
  add();
  add(`${report.passed ? 'PASSED' : 'FAILED'}: ${report.violations.total} violations${file ? `; report written to ${file}` : ''}`);
  return lines.join('\n');
}
