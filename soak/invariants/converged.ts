import { configHash } from '../../examples/configmap-rollout/hash.js';
import { configMapUses } from '../../examples/configmap-rollout/references.js';
import { CONFIG_HASH } from '../../examples/configmap-rollout/types.js';
import { describeProblem, problems } from '../../examples/demo/state.js';
import type { Deployment } from 'rxkube/kinds';
import { controllerUid, isSource, isTwin, sameData, twinName } from '../mirror/types.js';
import { appConfigName, subjectId, type SubjectKind } from '../subjects.js';
import type { ClusterView } from './clusterView.js';

/**
 * What is not yet as the controllers should make it, for one subject;
 * undefined when it has converged.
 *
 * - mirror `src-i`: a source has its twin `src-i-mirror` (label
 *   `mirror=dst`, the same data, controlled by that very source, by uid);
 *   a name that is no source has no twin.
 * - autoscaler `app-i`: the examples' own convergence rules
 *   (`examples/demo/state.ts` `problems`) on the PodAutoscaler and the
 *   Deployment it targets: finalizer, observedGeneration, Ready reason,
 *   the Deployment's replicas equal to what it asks for, the `scaled-by`
 *   stamp exactly on the Deployment it drives; none left by one that is gone.
 * - rollout `app-i`: the Deployment's pod template carries the hash of the
 *   data of the ConfigMap it mounts (unless that ConfigMap is missing, when
 *   the controller waits). The workload changes that ConfigMap many times;
 *   each change must end in a stamp of its data, or of a later change's.
 */
export function subjectProblem(view: ClusterView, kind: SubjectKind, name: string): string | undefined {
  switch (kind) {
    case 'mirror': {
      const source = view.configMaps.get(name);
      const twin = view.configMaps.get(twinName(name));
      if (!isSource(source)) return twin === undefined ? undefined : `twin ${twinName(name)} remains, its source is gone`;
      if (twin === undefined) return `source ${name} has no twin`;
      if (!isTwin(twin)) return `twin ${twinName(name)} is not labelled mirror=dst`;
      if (!sameData(twin.data, source.data)) return `twin ${twinName(name)} has data v=${twin.data?.v ?? '-'}, source v=${source.data?.v ?? '-'}`;
      if (controllerUid(twin) !== source.metadata.uid) return `twin ${twinName(name)} is controlled by ${controllerUid(twin) ?? 'nobody'}, not by source uid ${source.metadata.uid ?? ''}`;
      return undefined;
    }
    case 'autoscaler': {
      const pa = view.autoscalers.get(name);
      const deployment = view.deployments.get(name) as Deployment | undefined;
      const found = problems({ autoscalers: pa ? [pa] : [], deployments: deployment ? [deployment] : [] });
      return found.length === 0 ? undefined : found.map(describeProblem).join('; ');
    }
    case 'rollout': {
      const deployment = view.deployments.get(name);
      if (deployment === undefined) return undefined;
      const wanted = configHash(configMapUses(deployment), (cm) => view.configMaps.get(cm));
      if (wanted.hash === undefined) return undefined;
      const stamped = deployment.spec?.template?.metadata?.annotations?.[CONFIG_HASH];
      return stamped === wanted.hash ? undefined : `deployment ${name} is stamped ${stamped?.slice(0, 8) ?? 'nothing'}, ${appConfigName(name)} hashes to ${wanted.hash.slice(0, 8)}`;
    }
  }
}

/** Every subject the view shows, or that the workload names (`names` by kind): for the check after the faults stop. */
export function allSubjects(view: ClusterView, names: Partial<Record<SubjectKind, readonly string[]>>): string[] {
  const ids = new Set<string>();
  const add = (kind: SubjectKind, name: string) => ids.add(subjectId(kind, view.namespace, name));
  for (const [kind, list] of Object.entries(names) as [SubjectKind, readonly string[]][]) for (const name of list) add(kind, name);
  for (const [name, cm] of view.configMaps) {
    if (isSource(cm)) add('mirror', name);
    // A twin's source, even when it is gone: an orphan is a problem of that name.
    if (isTwin(cm) && name.endsWith('-mirror')) add('mirror', name.slice(0, -'-mirror'.length));
  }
  for (const name of view.deployments.keys()) {
    add('autoscaler', name);
    add('rollout', name);
  }
  for (const name of view.autoscalers.keys()) add('autoscaler', name);
  return [...ids];
}
