import type { KubeObject } from 'rxkube';
import { deployments, type Deployment } from 'rxkube/kinds';
import type { Health } from './types.js';

/** Whether an applied object is an apps/v1 Deployment (what the API server answers a Deployment's apply with). */
function isDeployment(live: KubeObject): live is Deployment {
  return live.apiVersion === deployments.apiVersion && live.kind === deployments.kind;
}

/**
 * The health of an applied object, as the API server returned it. A
 * Deployment is `Healthy` once its controller has seen its generation and
 * every replica is updated and available, `Degraded` once its rollout
 * passed its progress deadline, `Progressing` until then. Other kinds have
 * no rollout to wait for: applied is healthy.
 */
export function healthOf(live: KubeObject): Health {
  if (!isDeployment(live)) return 'Healthy';
  const status = live.status ?? {};
  if (status.conditions?.some((c) => c.type === 'Progressing' && c.status === 'False' && c.reason === 'ProgressDeadlineExceeded')) return 'Degraded';
  const wanted = live.spec?.replicas ?? 1;
  const seen = (status.observedGeneration ?? 0) >= (live.metadata.generation ?? 1);
  return seen && (status.updatedReplicas ?? 0) >= wanted && (status.availableReplicas ?? 0) >= wanted ? 'Healthy' : 'Progressing';
}

const rank: Record<Health, number> = { Healthy: 0, Progressing: 1, Missing: 2, Degraded: 3 };

/** The worst of several healths (`Healthy` for none). */
export function worstHealth(healths: Iterable<Health>): Health {
  let worst: Health = 'Healthy';
  for (const h of healths) if (rank[h] > rank[worst]) worst = h;
  return worst;
}
