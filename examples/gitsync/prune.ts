import { isNotFound, KubeApiError, type ControllerContext, type KubeObject } from 'rxkube';
import { identity } from './source.js';
import { INVENTORY_LABEL, type Application } from './types.js';

/** A kind to look for leftovers of: `apiVersion` and `kind`. */
export interface KindRef {
  apiVersion: string;
  kind: string;
}

/** What pruning found: the objects deleted (or, with prune off, left to delete), and those it failed to delete. */
export interface Pruned {
  /** `ConfigMap old`, … */
  removed: string[];
  failed: { name: string; message: string }[];
}

/**
 * The objects of the Application's namespace that carry its inventory
 * label, of the kinds given, and that the revision no longer holds: found
 * by label selector only, so an object without the label (or with another
 * Application's) is never among them, whatever its name. With `dryRun`
 * (prune off) they are only listed; else deleted, and one that cannot be
 * deleted is reported and the others still go.
 */
export async function prune(app: Application, kinds: readonly KindRef[], wanted: ReadonlySet<string>, ctx: ControllerContext<Application>, dryRun: boolean): Promise<Pruned> {
  const namespace = app.metadata.namespace ?? 'default';
  const result: Pruned = { removed: [], failed: [] };
  const seen = new Set<string>();
  for (const { apiVersion, kind } of kinds) {
    let leftovers: KubeObject[];
    try {
      leftovers = await ctx.client.list({ apiVersion, kind, namespace }, { labelSelector: `${INVENTORY_LABEL}=${app.metadata.name ?? ''}`, signal: ctx.signal });
    } catch (err) {
      ctx.signal.throwIfAborted();
      // A kind that is gone from the server (its CRD deleted) has nothing left to prune.
      if ((err as Error).name === 'UnknownResourceError' || isNotFound(err)) continue;
      throw err;
    }
    for (const object of leftovers) {
      const id = identity({ ...object, apiVersion });
      if (wanted.has(id) || seen.has(id)) continue;
      seen.add(id);
      const name = `${kind} ${object.metadata.name ?? ''}`;
      if (dryRun) {
        result.removed.push(name);
        continue;
      }
      try {
        await ctx.client.remove(object, { preconditions: { uid: object.metadata.uid ?? '' }, signal: ctx.signal });
        result.removed.push(name);
      } catch (err) {
        ctx.signal.throwIfAborted();
        if (!(err instanceof KubeApiError)) throw err;
        result.failed.push({ name, message: err.message });
      }
    }
  }
  return result;
}
