import { BehaviorSubject, concatMap, dematerialize, filter, map, materialize, mergeMap, type Observable, type SchedulerLike, take } from 'rxjs';
import { shardLeaseClient, type ShardLeaseClient } from '../../src/sinks/leader/shardLeaseClient.js';
import { memoryTransport, type Latency } from '../../src/testing/memory/memoryTransport.js';
import { virtualServer } from '../../src/testing/memory/virtualServer.js';
import type { InProcessServer } from '../../src/apiserver/inProcessServer.js';

/** A shard lease client over one in-process server on `scheduler` (virtual or dilated time), with the latency of each leg. */
export function virtualShardClient(scheduler: SchedulerLike, latency: Latency = 0): { client: ShardLeaseClient; server: InProcessServer } {
  const server = virtualServer(scheduler);
  return { client: shardLeaseClient(memoryTransport(server, { scheduler, latency, answerLatency: latency })), server };
}

/** A shard lease client a test can cut off (`hang`: calls and answers held; `fail`: calls and answers fail) and reconnect. */
export interface PausableShardClient {
  readonly client: ShardLeaseClient;
  /** The mode while paused; undefined while connected. */
  readonly paused: 'hang' | 'fail' | undefined;
  pause(mode: 'hang' | 'fail'): void;
  resume(): void;
}

export function pausableShard(inner: ShardLeaseClient): PausableShardClient {
  const state = new BehaviorSubject<'hang' | 'fail' | undefined>(undefined);
  const gate = (what: string): Observable<void> =>
    state.pipe(
      filter((mode) => mode !== 'hang'),
      take(1),
      map((mode) => {
        if (mode === 'fail') throw new Error(`paused: ${what} failed`);
      }),
    );
  const wrap = <T>(what: string, call: () => Observable<T>): Observable<T> =>
    gate(what).pipe(
      mergeMap(() => call().pipe(materialize())),
      concatMap((n) => (n.kind === 'C' ? [n] : gate(what).pipe(map(() => n)))),
      dematerialize(),
    );
  return {
    client: {
      get: (namespace, name) => wrap('get', () => inner.get(namespace, name)),
      create: (lease) => wrap('create', () => inner.create(lease)),
      update: (lease) => wrap('update', () => inner.update(lease)),
      list: (namespace, selector) => wrap('list', () => inner.list(namespace, selector)),
      delete: (lease) => wrap('delete', () => inner.delete(lease)),
    },
    pause: (mode) => state.next(mode),
    resume: () => state.next(undefined),
    get paused() {
      return state.value;
    },
  };
}

/** A small seeded generator, so one fast-check seed replays the same latencies, jitter and runs. */
export function mulberry32(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
