import { isNotFound, type ControllerContext, type ReconcileResult } from 'rxkube';
import { applyManifest } from './apply.js';
import { prune, type KindRef } from './prune.js';
import { RevisionError } from './repository.js';
import { identity, readDesiredState, type DesiredState } from './source.js';
import { syncedStatus, unreadableStatus, writeStatus, type SyncReport } from './status.js';
import { pollIntervalSeconds, trackedKinds, type Application, type ApplicationSpec } from './types.js';

/** How the gitsync reconcile reads repositories. */
export interface GitSyncSettings {
  /** Where repositories named by URL are cloned (one bare clone per URL, fetched at every poll). */
  cacheDir: string;
  /**
   * Reads the desired state (default `readDesiredState`, from Git). A test
   * in virtual time gives a reader that does no real I/O.
   */
  read?: (spec: ApplicationSpec, cacheDir: string, signal: AbortSignal) => Promise<DesiredState>;
}

/**
 * Syncs one Application: reads its revision, applies every manifest
 * there (each on its own: a broken one is reported, the others apply),
 * prunes what it applied before and the revision no longer holds, writes
 * `status` (sync status, commit, per-object status and health) and
 * records Events for what changed. Then asks to run again after the
 * poll interval, which is how new commits are picked up (and drift of
 * kinds that are not watched corrected). A revision that cannot be read
 * changes nothing in the cluster: it is reported and polled again.
 */
export function gitSyncReconciler(settings: GitSyncSettings) {
  const read = settings.read ?? readDesiredState;
  return async (_key: string, ctx: ControllerContext<Application>): Promise<ReconcileResult | void> => {
    if (ctx.object === undefined) return; // deleted: the garbage collector removes what it owned
    // A strongly consistent read: the cache may not hold the status the last run wrote yet (this run
    // may be the one its own applies triggered), and Events and prune compare with that status.
    const app = await ctx.client.get(ctx.object, { signal: ctx.signal }).catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    if (app === undefined) return;
    const again: ReconcileResult = { requeueAfter: pollIntervalSeconds(app) * 1000 };
    const now = new Date(ctx.now());
    let desired;
    try {
      desired = await read(app.spec, settings.cacheDir, ctx.signal);
    } catch (err) {
      if (!(err instanceof RevisionError)) throw err;
      if (app.status?.sync?.message !== err.message) ctx.recorder.record(app, { type: 'Warning', reason: err.reason, action: 'Sync', note: err.message });
      await writeStatus(app, unreadableStatus(app, err, now), ctx);
      return again;
    }
    const applied = [];
    for (const manifest of desired.manifests) applied.push(await applyManifest(app, manifest, ctx));
    const wanted = new Set(desired.manifests.map((m) => identity(m.object)));
    const pruneOff = app.spec.prune === false;
    const pruneHeld = desired.errors.length > 0;
    const pruned = pruneHeld ? { removed: [], failed: [] } : await prune(app, kindsToPrune(app, desired.manifests.map((m) => m.object)), wanted, ctx, pruneOff);
    const report: SyncReport = { commit: desired.commit, applied, errors: desired.errors, pruned, pruneOff, pruneHeld };
    recordEvents(app, report, ctx);
    await writeStatus(app, syncedStatus(app, report, now), ctx);
    return again;
  };
}

/** Every kind an object of this Application may be of: what it applied before (its status), what it applies now, and the watched kinds. */
function kindsToPrune(app: Application, objects: readonly { apiVersion?: string; kind?: string }[]): KindRef[] {
  const all = [
    ...(app.status?.resources ?? []),
    ...objects,
    ...trackedKinds().map((r) => ({ apiVersion: r.group === '' ? r.version : `${r.group}/${r.version}`, kind: r.kind })),
  ];
  const byKey = new Map<string, KindRef>();
  for (const { apiVersion, kind } of all) if (apiVersion && kind) byKey.set(`${apiVersion}/${kind}`, { apiVersion, kind });
  return [...byKey.values()];
}

/**
 * Events for what changed, not for every poll: `Synced` when the commit
 * moved or objects were created, updated or pruned; `DriftCorrected`
 * for objects changed by hand at a commit already synced; a Warning for
 * the manifest errors and failed objects not in the last status.
 */
function recordEvents(app: Application, report: SyncReport, ctx: ControllerContext<Application>): void {
  const previous = app.status;
  const short = report.commit.slice(0, 7);
  const moved = previous?.sync?.revision !== report.commit;
  const count = (action: string) => report.applied.filter((a) => a.action === action);
  const created = count('created');
  const updated = count('updated');
  const removed = report.pruneOff ? [] : report.pruned.removed;
  if (moved || created.length > 0 || removed.length > 0) {
    const pruned = removed.length > 0 ? ` (${removed.join(', ')})` : '';
    const note = `commit ${short}: ${created.length} created, ${moved ? updated.length : 0} updated, ${count('unchanged').length} unchanged, ${removed.length} pruned${pruned}`;
    ctx.recorder.record(app, { type: 'Normal', reason: 'Synced', action: 'Sync', note });
  }
  if (!moved && updated.length > 0) {
    const names = updated.map((a) => `${a.resource.kind} ${a.resource.name}`).join(', ');
    ctx.recorder.record(app, { type: 'Normal', reason: 'DriftCorrected', action: 'Apply', note: `${names} changed in the cluster; restored to commit ${short}` });
  }
  // One Warning per reason listing what is new since the last status: Events of one reason about one
  // object are counted as one series whatever their notes say, so one Event per problem would merge anyway.
  const knownErrors = new Set((previous?.errors ?? []).map((e) => `${e.file}\n${e.message}`));
  const newErrors = report.errors.filter((e) => !knownErrors.has(`${e.file}\n${e.message}`)).map((e) => `${e.file}: ${e.message}`);
  if (newErrors.length > 0) ctx.recorder.record(app, { type: 'Warning', reason: 'ManifestError', action: 'Sync', note: newErrors.join('; ') });
  const knownFailures = new Set((previous?.resources ?? []).filter((r) => r.status === 'Failed').map((r) => `${r.kind}/${r.name}\n${r.message ?? ''}`));
  const newFailures = report.applied
    .map((a) => a.resource)
    .filter((r) => r.status === 'Failed' && !knownFailures.has(`${r.kind}/${r.name}\n${r.message ?? ''}`))
    .map((r) => `${r.kind} ${r.name} (${r.file}): ${r.message ?? ''}`);
  if (newFailures.length > 0) ctx.recorder.record(app, { type: 'Warning', reason: 'ApplyFailed', action: 'Apply', note: newFailures.join('; ') });
  if (report.pruned.failed.length > 0) ctx.recorder.record(app, { type: 'Warning', reason: 'PruneFailed', action: 'Delete', note: report.pruned.failed.map((f) => `${f.name}: ${f.message}`).join('; ') });
}
