import type { KubeObject } from 'rxkube';
import type { Health } from './types.js';

interface DeploymentLike extends KubeObject {
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    availableReplicas?: number;
    conditions?: { type: string; status: string; reason?: string }[];
  };
}

/**
 * The health of an applied object, as the API server returned it. A
 * Deployment is `Healthy` once its controller has seen its generation and
 * every replica is updated and available, `Degraded` once its rollout
 * passed its progress deadline, `Progressing` until then. Other kinds have
 * no rollout to wait for: applied is healthy.
 */
export function healthOf(live: KubeObject): Health {
  if (live.kind !== 'Deployment') return 'Healthy';
  const d = live as DeploymentLike;
  const status = d.status ?? {};
  if (status.conditions?.some((c) => c.type === 'Progressing' && c.status === 'False' && c.reason === 'ProgressDeadlineExceeded')) return 'Degraded';
  const wanted = d.spec?.replicas ?? 1;
  const seen = (status.observedGeneration ?? 0) >= (d.metadata.generation ?? 1);
  return seen && (status.updatedReplicas ?? 0) >= wanted && (status.availableReplicas ?? 0) >= wanted ? 'Healthy' : 'Progressing';
}

const rank: Record<Health, number> = { Healthy: 0, Progressing: 1, Missing: 2, Degraded: 3 };

/** The worst of several healths (`Healthy` for none). */
export function worstHealth(healths: Iterable<Health>): Health {
  let worst: Health = 'Healthy';
  for (const h of healths) if (rank[h] > rank[worst]) worst = h;
  return worst;
}
