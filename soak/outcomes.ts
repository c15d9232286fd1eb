import { KubeApiError, type ReconcileOutcome } from 'rxkube';
import { InjectedReconcileFailure } from './chaosReconcile.js';
import { bump } from './stats.js';
import type { Violations } from './violations.js';

export interface ControllerStats {
  reconciles: number;
  /** Outcomes by result: success, error, requeue, requeue_after, dropped. */
  results: Record<string, number>;
  /** Failed runs by cause: `injected`, `http <code> <reason>`, or the error's name. */
  errors: Record<string, number>;
  /** Failures neither injected nor an API error: the first few, in full (each is a lead to a bug). */
  unexpected: string[];
  /** The first few failures of each kind but `injected`, in one line each. */
  samples: Record<string, string[]>;
}

function apiError(err: unknown): KubeApiError | undefined {
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof KubeApiError) return e;
  }
  return undefined;
}

function describe(err: unknown): string {
  const causes: string[] = [];
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    causes.push(e instanceof Error ? e.message : String(e));
  }
  return causes.join(' <- ');
}

/** Why a run failed, as a counting key. */
export function failureKind(err: unknown): string {
  if (err instanceof InjectedReconcileFailure) return 'injected';
  const api = apiError(err);
  if (api !== undefined) return `http ${api.code} ${api.reason}`;
  return err instanceof Error ? err.name : typeof err;
}

/**
 * Counts every controller's outcomes. A run that failed with an error that
 * was neither injected nor an answer of the API server (a TypeError, a
 * failed assertion in a reconcile, a bug) is a violation, when given where
 * to record one: no such error is expected, whatever the faults.
 */
export class OutcomeCounter {
  readonly byController: Record<string, ControllerStats> = {};

  constructor(private readonly violations?: Violations) {}

  add(controller: string, outcome: ReconcileOutcome): void {
    const stats = (this.byController[controller] ??= { reconciles: 0, results: {}, errors: {}, unexpected: [], samples: {} });
    stats.reconciles++;
    bump(stats.results, outcome.result);
    if (outcome.result !== 'error' && outcome.result !== 'dropped') return;
    const kind = failureKind(outcome.error);
    bump(stats.errors, kind);
    if (kind !== 'injected' && (stats.samples[kind]?.length ?? 0) < 3) {
      (stats.samples[kind] ??= []).push(`${outcome.key}: ${describe(outcome.error)}`.slice(0, 500));
    }
    if (kind !== 'injected' && !kind.startsWith('http ')) {
      const err = outcome.error;
      const detail = `${outcome.key}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`.slice(0, 1_500);
      if (stats.unexpected.length < 10) stats.unexpected.push(detail);
      this.violations?.record('unexpected-reconcile-error', `${controller} ${outcome.result}: ${detail}`);
    }
  }

  /** Reconciles over all controllers. */
  get total(): number {
    return Object.values(this.byController).reduce((n, s) => n + s.reconciles, 0);
  }

  /** Runs that failed and were retried, over all controllers. */
  get retries(): number {
    return Object.values(this.byController).reduce((n, s) => n + (s.results.error ?? 0) + (s.results.requeue ?? 0), 0);
  }
}
