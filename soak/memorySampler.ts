import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

export interface MemorySample {
  /** Seconds since the soak began. */
  t: number;
  heapUsedMB: number;
  rssMB: number;
}

const mb = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;

/**
 * Samples heap and RSS (without forcing a GC, so the figures show the
 * sawtooth of a running process) every `periodMs`, and the event loop's
 * delay: how late timers fire, which is what the leader-election timings
 * and the convergence figures suffer from on a busy machine.
 */
export class MemorySampler {
  readonly samples: MemorySample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly loop: IntervalHistogram = monitorEventLoopDelay({ resolution: 10 });

  constructor(
    private readonly started: number,
    private readonly periodMs: number,
  ) {}

  start(): void {
    this.loop.enable();
    this.sample();
    this.timer = setInterval(() => this.sample(), this.periodMs);
  }

  stop(): void {
    clearInterval(this.timer);
    this.sample();
    this.loop.disable();
  }

  sample(): MemorySample {
    const { heapUsed, rss } = process.memoryUsage();
    const s = { t: Math.round((Date.now() - this.started) / 100) / 10, heapUsedMB: mb(heapUsed), rssMB: mb(rss) };
    this.samples.push(s);
    return s;
  }

  /** Event loop delay in ms: median, p99, worst. */
  eventLoopDelay(): { p50: number; p99: number; max: number } {
    const ms = (ns: number) => Math.round(ns / 1e5) / 10;
    return { p50: ms(this.loop.percentile(50)), p99: ms(this.loop.percentile(99)), max: ms(this.loop.max) };
  }
}

export { mb };
