import type { ObjectKey } from '../../types.js';
import { lines } from '../marble/timeline.js';
import type { RecordedRun, RunRecord } from './runSteps.js';

/** One run as replay compares it: the nth run of a key, as recorded and as replayed. */
export interface ReplayedRunResult {
  /** The key the runs were for. */
  readonly key: ObjectKey;
  /** Its rank among the runs of its key, from 1. */
  readonly run: number;
  /** The recorded run; undefined when the replay made a run the recording does not have. */
  readonly recorded: RunRecord | undefined;
  /** The replayed run; undefined when the replay did not make it. */
  readonly replayed: RunRecord | undefined;
  /** False only for a recorded run still in flight when the recording stopped: there is nothing to compare it with. */
  readonly compared: boolean;
  /** Both made the same requests (with the same answers' codes) and Events, in the same order, and ended alike. */
  readonly same: boolean;
}

function withoutRequests(r: RecordedRun): RunRecord {
  const { requests: _requests, startIndex: _start, endIndex: _end, ...run } = r;
  return run;
}

/** Pairs recorded and replayed runs by key and rank, in the order they started. */
export function compareRuns(recorded: ReadonlyMap<ObjectKey, readonly RecordedRun[]>, replayed: readonly RunRecord[]): ReplayedRunResult[] {
  const replayedByKey = new Map<ObjectKey, RunRecord[]>();
  for (const r of replayed) replayedByKey.set(r.key, [...(replayedByKey.get(r.key) ?? []), r]);
  const keys = new Set([...recorded.keys(), ...replayedByKey.keys()]);
  const out: ReplayedRunResult[] = [];
  for (const key of keys) {
    const before = recorded.get(key) ?? [];
    const after = replayedByKey.get(key) ?? [];
    for (let i = 0; i < Math.max(before.length, after.length); i++) {
      const rec = before[i];
      const rep = after[i];
      const compared = rec === undefined || rec.end !== undefined;
      const same = rec !== undefined && rep !== undefined && rec.steps.length === rep.steps.length && rec.steps.every((s, j) => s.text === rep.steps[j]?.text);
      out.push({ key, run: i + 1, recorded: rec === undefined ? undefined : withoutRequests(rec), replayed: rep, compared, same });
    }
  }
  const startOf = (r: ReplayedRunResult): number => (r.recorded ?? r.replayed)?.start ?? 0;
  return out.sort((a, b) => startOf(a) - startOf(b) || (a.key < b.key ? -1 : a.key > b.key ? 1 : a.run - b.run));
}

function runLines(run: RunRecord | undefined, start: number): string {
  return lines((run?.steps ?? []).map((s) => ({ frame: s.at - start, text: s.text })));
}

/**
 * A difference as two timelines, in the layout `runReconcile`'s failures
 * use (frames are ms since the recording started):
 *
 * ```
 * run 2 of default/web (attempt 1, at 1520 ms) differs
 *   recorded:
 *       1520ms  get deployments.apps default/web
 *       1523ms  default/web success
 *   replayed:
 *       1520ms  get deployments.apps default/web
 *       1520ms  patch deployments.apps default/web (not recorded)
 *       1523ms  default/web error: replay: run 2 of "default/web" made a request the recording did not: …
 * ```
 */
export function describeDifference(run: ReplayedRunResult, start: number): string {
  const first = run.recorded ?? run.replayed;
  const title = `run ${run.run} of ${run.key} (attempt ${first?.attempt ?? '?'}, at ${(first?.start ?? start) - start} ms) differs`;
  return `${title}\n  recorded:\n${runLines(run.recorded, start)}\n  replayed:\n${runLines(run.replayed, start)}`;
}

/** What the `rxkube replay` command prints: `N runs replayed, M differ`, then each difference. */
export function replayReport(result: { runs: readonly ReplayedRunResult[]; replayed: number; differ: number; start: number; error?: string; warnings: readonly string[] }): string {
  const parts = [`${result.replayed} run${result.replayed === 1 ? '' : 's'} replayed, ${result.differ} differ`];
  for (const run of result.runs) if (run.compared && !run.same) parts.push(describeDifference(run, result.start));
  if (result.error !== undefined) parts.push(`the replayed controller failed: ${result.error}`);
  return parts.join('\n\n');
}
