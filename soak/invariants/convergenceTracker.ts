import { distribution, type Distribution } from '../stats.js';
import { parseSubject, type SubjectKind } from '../subjects.js';
import type { ClusterView } from './clusterView.js';
import { subjectProblem } from './converged.js';

/**
 * Measures how long subjects take to converge while the soak runs: a
 * subject becomes dirty when the workload writes one of its objects, and
 * stays dirty (keeping that first time) until a sweep of the server's state
 * finds it converged. So a figure is the time from a change until the
 * cluster was again as the controllers should make it, through any later
 * changes that came meanwhile. Sweeps run every few hundred ms, which is
 * the figures' resolution.
 */
export class ConvergenceTracker {
  private readonly dirty = new Map<string, number>();
  private readonly latencies: Record<SubjectKind, number[]> = { mirror: [], autoscaler: [], rollout: [] };

  touch(subject: string): void {
    if (!this.dirty.has(subject)) this.dirty.set(subject, performance.now());
  }

  get pending(): number {
    return this.dirty.size;
  }

  /** Checks every dirty subject of the views' namespaces; records the converged ones. */
  sweep(views: readonly ClusterView[]): void {
    const now = performance.now();
    const byNamespace = new Map(views.map((v) => [v.namespace, v]));
    for (const [id, since] of this.dirty) {
      const { kind, namespace, name } = parseSubject(id);
      const view = byNamespace.get(namespace);
      if (view === undefined || subjectProblem(view, kind, name) !== undefined) continue;
      this.latencies[kind].push(now - since);
      this.dirty.delete(id);
    }
  }

  /** Forgets what is dirty (after a phase checked every subject itself). */
  clear(): void {
    this.dirty.clear();
  }

  summary(): Record<SubjectKind | 'all', Distribution> {
    const all = [...this.latencies.mirror, ...this.latencies.autoscaler, ...this.latencies.rollout];
    return {
      all: distribution(all),
      mirror: distribution(this.latencies.mirror),
      autoscaler: distribution(this.latencies.autoscaler),
      rollout: distribution(this.latencies.rollout),
    };
  }
}
