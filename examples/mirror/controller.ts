import type { KubeConfig } from '@kubernetes/client-node';
import { fromEvent, merge, take, type Observable } from 'rxjs';
import {
  controllerMetrics,
  deltas,
  eventRecorder,
  filterDeltas,
  indexer,
  kubeClient,
  listWatch,
  mapToKeys,
  mapToOwners,
  reconcileByKey,
  resourceVersionChanged,
  restClientMetrics,
  setControllerReference,
  Store,
  type KubeObject,
  type PipelineContext,
  type ReconcileOutcome,
  type WatchedResource,
} from 'rxkube';

/**
 * A controller composed by hand from rxkube's parts, not by `controller()`:
 * every ConfigMap labelled `mirror=true` gets a copy `<name>-mirror` that
 * it owns. The originals' store is what the reconcile reads; the copies'
 * changes run their owner's key, so a copy changed or deleted by hand is
 * restored. docs/compose.md builds it step by step.
 */

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

/** The originals (the keys it reconciles) and the copies (listed and watched for their owners), in one namespace or all. */
export const originals = (namespace?: string): WatchedResource => ({ version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace, labelSelector: 'mirror=true' });
export const copies = (namespace?: string): WatchedResource => ({ version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace, labelSelector: 'mirror-of' });

/** The pipeline: list-watch, deltas, the store, keys, the workqueue; it completes once its context's signal has stopped it and its runs have ended. */
export function mirrorPipeline(namespace: string | undefined): (ctx: PipelineContext) => Observable<ReconcileOutcome> {
  return ({ name, kubeConfig, logger, registry, signal, ready }) => {
    const requests = restClientMetrics({ registry });
    const client = kubeClient(kubeConfig, { logger, requests, fieldManager: name });
    const recorder = eventRecorder({ client, logger, reportingController: name, reportingInstance: process.env.POD_NAME ?? name });
    const store = new Store<ConfigMap>();
    const copyStore = new Store<ConfigMap>();
    ready(() => store.synced && copyStore.synced);
    const sourceOptions = { logger, requests, signal };
    const originalKeys = listWatch<ConfigMap>(kubeConfig, originals(namespace), { ...sourceOptions, labelSelector: 'mirror=true' }).pipe(
      deltas({ logger }),
      indexer({ store }),
      filterDeltas(resourceVersionChanged),
      mapToKeys((delta) => delta.key),
    );
    const copyOwners = listWatch<ConfigMap>(kubeConfig, copies(namespace), { ...sourceOptions, labelSelector: 'mirror-of' }).pipe(
      deltas({ logger }),
      indexer({ store: copyStore }),
      mapToOwners({ group: '', kind: 'ConfigMap' }),
    );
    const metrics = controllerMetrics({ registry, controller: name, maxConcurrentReconciles: 2 });
    return merge(originalKeys, copyOwners).pipe(
      reconcileByKey(
        async (key, { signal: runSignal }) => {
          const original = store.get(key);
          if (original === undefined) return; // deleted: the copy goes with it, through its owner reference
          const copyName = `${original.metadata.name as string}-mirror`;
          const copy: ConfigMap = {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: copyName, namespace: original.metadata.namespace, labels: { 'mirror-of': original.metadata.name as string } },
            data: original.data ?? {},
          };
          await client.apply(setControllerReference(original, copy), { signal: runSignal, force: true });
          recorder.record(original, { type: 'Normal', reason: 'Mirrored', action: 'Mirror', note: `copied to ${copyName}` });
        },
        // A graceful stop: no key starts once the signal is aborted, runs in flight finish, then the output completes.
        { concurrency: 2, logger, stop: fromEvent(signal, 'abort').pipe(take(1)), observer: metrics.observer },
      ),
      metrics.recordOutcomes(),
    );
  };
}

/** What `rxkube manifests` and `rxkube run` read: the pipeline in the namespace it is deployed to, with what it lists, watches and writes. */
export function definition(_kubeConfig: KubeConfig, where: { namespace: string }) {
  return {
    name: 'mirror',
    for: originals(where.namespace),
    informers: [copies(where.namespace)],
    permissions: [{ resource: 'configmaps', verbs: ['patch' as const] }],
    pipeline: mirrorPipeline(where.namespace),
  };
}
