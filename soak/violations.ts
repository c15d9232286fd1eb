/** The invariants the soak checks; each is counted, and every count must end at 0. */
export const INVARIANTS = {
  'concurrent-reconcile': 'never two reconciles of one key at once, per controller',
  convergence: 'after the faults stop, every object converges within the bound',
  'store-matches-server': 'after quiescence, every store holds what the server holds (keys and resourceVersions)',
  'unhandled-rejection': 'no unhandled promise rejection',
  'uncaught-exception': 'no uncaught exception',
  'heap-growth': 'heap after GC at the end within 20 % of its level after the first minute (and compared at all: two calm phases at least)',
  'controller-ended': 'no controller errors or completes on its own',
  'unexpected-reconcile-error': 'no reconcile fails with an error that was neither injected nor an answer of the API server',
  'cluster-isolation': 'many clusters: every run of a key has its own cluster\'s context and client, and starts only while that cluster is joined',
  'leader-overlap': 'never two leader-elected replicas reconciling at once',
  'shard-ownership': 'sharded: once the faults stop, every slot has exactly one owner among the running replicas',
  'leader-takeover': 'a new leader takes over no sooner than the lease duration after the last renewal, and on its first try after the lease expired in its eyes; only the holder clears the lease',
} as const;

export type Invariant = keyof typeof INVARIANTS;

export interface ViolationSample {
  invariant: Invariant;
  /** Seconds since the soak began. */
  at: number;
  detail: string;
}

/** Counts violations by invariant and keeps the first few of each, for the report. */
export class Violations {
  readonly counts: Record<Invariant, number>;
  readonly samples: ViolationSample[] = [];
  private readonly started = Date.now();

  constructor(private readonly samplesPerInvariant = 20) {
    this.counts = Object.fromEntries(Object.keys(INVARIANTS).map((k) => [k, 0])) as Record<Invariant, number>;
  }

  record(invariant: Invariant, detail: string): void {
    this.counts[invariant] += 1;
    if (this.samples.filter((s) => s.invariant === invariant).length < this.samplesPerInvariant) {
      this.samples.push({ invariant, at: Math.round((Date.now() - this.started) / 100) / 10, detail });
    }
  }

  get total(): number {
    return Object.values(this.counts).reduce((a, b) => a + b, 0);
  }
}
