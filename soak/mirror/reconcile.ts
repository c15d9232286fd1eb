import { isConflict, isNotFound, splitKey, type ControllerContext, type ObjectKey } from 'rxkube';
import { MIRROR_LABEL, TWIN, controllerUid, isSource, isTwin, sameData, twinName, type ConfigMap } from './types.js';

/**
 * Keeps the twin of a source ConfigMap (labelled `mirror=src`): a ConfigMap
 * `<name>-mirror`, labelled `mirror=dst`, with the same `data`, controlled
 * by the source (owner reference), so the API server's garbage collector
 * deletes it with the source too. A twin whose source is gone, is no longer
 * a source, or is a newer object under the same name, is deleted (or
 * re-owned) here without waiting for the collector.
 *
 * Level-triggered: it compares the cache with what should be and writes only
 * when they differ; a twin's own key has nothing to do (its changes come
 * back as its source's key through the owner reference).
 */
export async function reconcileMirror(key: ObjectKey, ctx: ControllerContext<ConfigMap>): Promise<void> {
  const source = ctx.object;
  if (isTwin(source)) return;
  const { namespace, name } = splitKey(key);
  const twinKey = `${namespace ?? ''}/${twinName(name)}`;
  const twin = ctx.store.get(twinKey);

  if (!isSource(source)) {
    if (twin === undefined || !isTwin(twin)) return;
    try {
      // Only the twin the cache showed: a newer one under the name is its source's business.
      await ctx.client.remove(twin, { signal: ctx.signal, ...(twin.metadata.uid ? { preconditions: { uid: twin.metadata.uid } } : {}) });
    } catch (err) {
      if (!isConflict(err) && !isNotFound(err)) throw err;
    }
    return;
  }

  if (twin !== undefined && isTwin(twin) && sameData(twin.data, source.data) && controllerUid(twin) === source.metadata.uid) return;
  const desired: ConfigMap = {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: twinName(name),
      namespace: namespace ?? '',
      labels: { [MIRROR_LABEL]: TWIN },
      ownerReferences: [
        { apiVersion: 'v1', kind: 'ConfigMap', name, uid: source.metadata.uid ?? '', controller: true, blockOwnerDeletion: true },
      ],
    },
    data: { ...source.data },
  };
  await ctx.client.createOrUpdate<ConfigMap>(
    desired,
    (live) => {
      live.metadata.labels = { ...live.metadata.labels, [MIRROR_LABEL]: TWIN };
      live.metadata.ownerReferences = desired.metadata.ownerReferences;
      live.data = { ...source.data };
    },
    { signal: ctx.signal },
  );
}
