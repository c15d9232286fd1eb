import { isDeepStrictEqual } from 'node:util';
import { setCondition, type ControllerContext } from 'rxkube';
import type { Applied } from './apply.js';
import { worstHealth } from './health.js';
import type { Pruned } from './prune.js';
import type { RevisionError } from './repository.js';
import type { Application, ApplicationStatus, ManifestError, SyncStatus } from './types.js';

/** What one sync of a readable revision came to. */
export interface SyncReport {
  commit: string;
  applied: Applied[];
  errors: ManifestError[];
  pruned: Pruned;
  /** Prune was off: `pruned.removed` are leftovers still in the cluster. */
  pruneOff: boolean;
  /** Prune was held back because some manifests were broken: their objects would have gone. */
  pruneHeld: boolean;
}

/** `Synced` when every manifest applied and nothing is left to prune; else `OutOfSync`, with what is wrong. */
export function syncVerdict(report: SyncReport): { status: SyncStatus; reason: string; message: string } {
  const failed = report.applied.filter((a) => a.action === 'failed');
  const problems = [
    ...report.errors.map((e) => `${e.file}: ${e.message}`),
    ...failed.map((a) => `${a.resource.kind} ${a.resource.name}: ${a.resource.message ?? 'failed'}`),
    ...report.pruned.failed.map((f) => `prune ${f.name}: ${f.message}`),
    ...(report.pruneOff && report.pruned.removed.length > 0 ? [`prune is off; left over: ${report.pruned.removed.join(', ')}`] : []),
    ...(report.pruneHeld ? ['prune held back while manifests are broken'] : []),
  ];
  const short = report.commit.slice(0, 7);
  if (problems.length === 0) return { status: 'Synced', reason: 'Synced', message: `${report.applied.length} objects applied at ${short}` };
  const reason = report.errors.length > 0 ? 'ManifestError' : failed.length > 0 ? 'ApplyFailed' : report.pruned.failed.length > 0 ? 'PruneFailed' : 'PruneRequired';
  return { status: 'OutOfSync', reason, message: `at ${short}: ${problems.join('; ')}`.slice(0, 1024) };
}

/** The status after a sync of a readable revision. */
export function syncedStatus(app: Application, report: SyncReport, now: Date): ApplicationStatus {
  const verdict = syncVerdict(report);
  const health = worstHealth([...report.applied.map((a) => a.resource.health), ...(report.errors.length > 0 ? (['Degraded'] as const) : [])]);
  return {
    observedGeneration: app.metadata.generation ?? 0,
    health,
    sync: { status: verdict.status, revision: report.commit, message: verdict.message },
    resources: report.applied.map((a) => a.resource),
    errors: report.errors,
    conditions: setCondition(app.status?.conditions, { type: 'Synced', status: verdict.status === 'Synced' ? 'True' : 'False', reason: verdict.reason, message: verdict.message, observedGeneration: app.metadata.generation ?? 0 }, now),
  };
}

/** The status when the revision could not be read: what was applied stays as it was, and stays listed. */
export function unreadableStatus(app: Application, error: RevisionError, now: Date): ApplicationStatus {
  return {
    ...app.status,
    observedGeneration: app.metadata.generation ?? 0,
    health: 'Degraded',
    sync: { status: 'Unknown', ...(app.status?.sync?.revision !== undefined ? { revision: app.status.sync.revision } : {}), message: error.message },
    conditions: setCondition(app.status?.conditions, { type: 'Synced', status: 'Unknown', reason: error.reason, message: error.message, observedGeneration: app.metadata.generation ?? 0 }, now),
  };
}

/** Writes the status when it differs from what the cache holds: a poll that changed nothing writes nothing. */
export async function writeStatus(app: Application, status: ApplicationStatus, ctx: ControllerContext<Application>): Promise<void> {
  if (isDeepStrictEqual(JSON.parse(JSON.stringify(status)), app.status ?? {})) return;
  await ctx.client.patchStatus({ ...app, apiVersion: app.apiVersion ?? 'gitsync.rxkube.dev/v1', kind: app.kind ?? 'Application' }, { status: { ...status, resources: status.resources ?? [], errors: status.errors ?? [] } }, { signal: ctx.signal });
}
