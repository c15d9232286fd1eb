import type { ApiServer, RequestMatch } from 'rxkube/testing';
import type { Random } from './random.js';
import { bump } from './stats.js';

export type FaultKind = 'drop-watches' | 'close-watches' | 'compact' | 'burst-429' | 'burst-500' | 'latency' | 'malformed-line' | 'silence';

/** Relative weights of the fault kinds. */
const weights: Record<FaultKind, number> = {
  'drop-watches': 2,
  'close-watches': 2,
  compact: 1,
  'burst-429': 2,
  'burst-500': 2,
  latency: 1,
  'malformed-line': 1,
  silence: 1,
};

/** Which requests a burst of errors hits: any, or one verb. */
const targets: (RequestMatch | undefined)[] = [undefined, undefined, { verb: 'watch' }, { verb: 'list' }, { verb: 'get' }, { verb: 'patch' }, { verb: 'create' }, { verb: 'update' }, { verb: 'delete' }];

export interface FaultStats {
  /** Faults injected, by kind. */
  injected: Record<string, number>;
  /** Requests the bursts were armed to fail, by status (a burst not used up when the faults stop is cleared). */
  armedErrors: Record<string, number>;
  /** Watches cut or closed, and lines of garbage written, summed over the faults. */
  watchesCut: number;
  malformedLines: number;
  storms: number;
}

/** Storms of faults and lulls between them, in real ms. */
export interface FaultWeather {
  /** Mean ms between faults during a storm. */
  meanIntervalMs: number;
  stormMs: [number, number];
  lullMs: [number, number];
}

/**
 * Injects the embedded server's faults in storms, at random intervals (a
 * Poisson process with mean `meanIntervalMs`), with lulls of random length
 * between them, as incidents come and go: watches dropped mid-stream or closed
 * cleanly, history compacted (the next watch from an old resourceVersion
 * gets 410, as an HTTP status or an ERROR event, at random), bursts of 429
 * with Retry-After and of 500 on all requests or one verb, a spell of added
 * latency, malformed lines written into every open watch, and watches kept open but
 * silent for a while (their events held, then sent in one go).
 *
 * Why lulls: a list-watch backs off after each failure, and its backoff
 * is forgotten only after minutes without one; under a steady rain of
 * faults every informer would sit in its longest backoff, dark, and the
 * soak would exercise little but sleeping. A lull lets the informers
 * reconnect and the controllers catch up before the next storm. A storm's
 * end clears what it armed: a burst aimed at a rare verb (list) would
 * otherwise outlive it by many seconds.
 */
export class FaultInjector {
  readonly stats: FaultStats = { injected: {}, armedErrors: {}, watchesCut: 0, malformedLines: 0, storms: 0 };
  private timer: NodeJS.Timeout | undefined;
  private latencyTimer: NodeJS.Timeout | undefined;
  private silenceTimer: NodeJS.Timeout | undefined;
  private stormEnds = 0;
  private coverage: FaultKind[] = [];
  private readonly kinds: FaultKind[];

  constructor(
    private readonly server: ApiServer,
    private readonly random: Random,
    private readonly weather: FaultWeather,
  ) {
    this.kinds = (Object.entries(weights) as [FaultKind, number][]).flatMap(([kind, w]) => Array<FaultKind>(w).fill(kind));
  }

  get running(): boolean {
    return this.timer !== undefined;
  }

  /**
   * Starts the storms. The first faults after each start are every kind
   * once, in random order (so that even a short run meets all of them);
   * then kinds are drawn by weight.
   */
  start(): void {
    if (this.timer !== undefined) return;
    const { meanIntervalMs, stormMs, lullMs } = this.weather;
    this.coverage = this.random.shuffle(Object.keys(weights) as FaultKind[]);
    const storm = () => {
      this.stormEnds = Date.now() + this.random.int(...stormMs);
      next();
    };
    const next = () => {
      const wait = this.random.exponential(meanIntervalMs);
      if (Date.now() + wait > this.stormEnds) {
        this.stats.storms++;
        this.timer = setTimeout(() => {
          // The incident ends: what it armed (bursts not used up, latency, silence) ends with it.
          this.clear();
          this.timer = setTimeout(storm, this.random.int(...lullMs));
        }, Math.max(0, this.stormEnds - Date.now()));
        return;
      }
      this.timer = setTimeout(() => {
        this.inject(this.coverage.pop() ?? this.random.pick(this.kinds));
        next();
      }, wait);
    };
    storm();
  }

  /** Stops injecting and clears every fault still armed (bursts not used up, latency, silence). */
  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.clear();
  }

  private clear(): void {
    clearTimeout(this.latencyTimer);
    clearTimeout(this.silenceTimer);
    this.latencyTimer = this.silenceTimer = undefined;
    this.server.faults.reset();
  }

  inject(kind: FaultKind): void {
    const { faults } = this.server;
    bump(this.stats.injected, kind);
    switch (kind) {
      case 'drop-watches':
        this.stats.watchesCut += faults.dropWatches();
        return;
      case 'close-watches':
        this.stats.watchesCut += faults.closeWatches();
        return;
      case 'compact':
        faults.watch410AsHttpStatus(this.random.chance(0.5));
        faults.compact();
        return;
      case 'burst-429':
      case 'burst-500': {
        const status = kind === 'burst-429' ? 429 : 500;
        const match = this.random.pick(targets);
        // Bursts on one verb are smaller: a rare verb (list) would take a long while to use up 40.
        const n = match === undefined ? this.random.int(5, 30) : this.random.int(2, 10);
        faults.failNext(n, { ...match, ...(status === 429 ? { code: status, retryAfterSeconds: 1 } : { code: status, message: 'injected by the soak' }) });
        bump(this.stats.armedErrors, String(status), n);
        return;
      }
      case 'latency': {
        faults.latency(this.random.int(20, 250));
        clearTimeout(this.latencyTimer);
        this.latencyTimer = setTimeout(() => faults.latency(0), this.random.int(1_000, 4_000));
        return;
      }
      case 'silence': {
        // Open watches stay open but send nothing (events are held, then sent at once).
        faults.silenceWatches();
        clearTimeout(this.silenceTimer);
        this.silenceTimer = setTimeout(() => faults.unsilenceWatches(), this.random.int(500, 5_000));
        return;
      }
      case 'malformed-line':
        this.stats.malformedLines += faults.malformedLine(this.random.chance(0.5) ? '{"type":"MODIFIED","object":{' : 'garbage from the soak');
        return;
    }
  }
}
