import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full garbage collection: `global.gc` when node runs with --expose-gc
 * (`npm run soak` does); otherwise the flag is set at run time and `gc`
 * taken from a fresh context, which V8 gives one once the flag is on (so the
 * short soak inside mocha measures the same way).
 */
export function fullGc(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (typeof existing === 'function') return existing;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** heapUsed after two full collections (the second sweeps what the first's finalizers freed), in bytes. */
export function heapAfterGc(gc: () => void): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** The heap figures the report gives, and how they were taken. */
export interface HeapCheck {
  method: string;
  baselineRound: number | undefined;
  baselineMB: number | undefined;
  finalMB: number | undefined;
  growthPercent: number | undefined;
  limitPercent: number;
}

/**
 * The no-leak check: heap after a full GC at the last calm phase against
 * the same at the first calm phase that ends after the first minute (the
 * first calm phase when the run is shorter). Both are taken in the same
 * state: workload stopped, faults off, everything converged and every store
 * matching the server, so what differs is what the run left behind. A
 * run with fewer than two calm phases is a violation, not a silent pass.
 */
export function checkHeap(rounds: readonly { round: number; endedAtSeconds: number; heapAfterGcMB: number }[], limitPercent = 20): HeapCheck & { violation?: string } {
  const method =
    'heapUsed after two full GCs (gc(), node --expose-gc), taken at the end of each calm phase (workload and faults stopped, ' +
    'everything converged, stores matching the server); baseline: the first such point after the first minute of the run ' +
    '(in a run too short for one before the last, the first); final: the last one';
  const final = rounds[rounds.length - 1];
  const earlier = rounds.slice(0, -1);
  const baseline = earlier.find((r) => r.endedAtSeconds >= 60) ?? earlier[0] ?? final;
  if (baseline === undefined || final === undefined || baseline === final) {
    // Not compared is not passed: a run too short for two calm phases has not shown that it does not leak.
    return {
      method,
      baselineRound: baseline?.round,
      baselineMB: baseline?.heapAfterGcMB,
      finalMB: final?.heapAfterGcMB,
      growthPercent: undefined,
      limitPercent,
      violation: `heap not compared: the run had ${rounds.length} calm phase(s), and the check needs two (run longer, or with rounds >= 2)`,
    };
  }
  const growthPercent = Math.round((final.heapAfterGcMB / baseline.heapAfterGcMB - 1) * 1000) / 10;
  return {
    method,
    baselineRound: baseline.round,
    baselineMB: baseline.heapAfterGcMB,
    finalMB: final.heapAfterGcMB,
    growthPercent,
    limitPercent,
    ...(growthPercent > limitPercent
      ? { violation: `heap after GC grew ${growthPercent} % (${baseline.heapAfterGcMB} MB after round ${baseline.round} → ${final.heapAfterGcMB} MB after round ${final.round}), more than ${limitPercent} %` }
      : {}),
  };
}
