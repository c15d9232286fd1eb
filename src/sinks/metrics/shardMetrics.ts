import type { Registry } from 'prom-client';
import { counterOn, gaugeOn, scrapedGaugeOn } from './metricRegistry.js';

/** A sharded controller's per-replica gauges and its handoff counter. */
export interface ShardMetrics {
  /** Sets what this replica owns now: slots, the ranges they make, and the live members it sees. */
  owned(figures: { slots: number; ranges: number; members: number }): void;
  /** Counts the primary keys of its slots in the cache at each scrape. */
  keys(count: () => number): void;
  /** Counts slots gained (`gained`) or let go (`released`). */
  handoffs(direction: 'gained' | 'released', count: number): void;
  /** Says once whether the server honours `shardSelector` for the primary resource (1) or this replica filters itself (0). */
  serverSide(honoured: boolean): void;
}

/**
 * The `rxkube_shard_*` metrics of one controller on `registry`, labelled
 * `controller`: `rxkube_shard_owned_slots`, `rxkube_shard_owned_ranges`,
 * `rxkube_shard_owned_keys` (at each scrape), `rxkube_shard_members` (gauges),
 * `rxkube_shard_handoffs_total{direction}` and
 * `rxkube_shard_server_side_selector` (1 when the API server honours
 * `shardSelector`, 0 when the replica filters on its side).
 */
export function shardMetrics(registry: Registry, controller: string): ShardMetrics {
  const slots = gaugeOn(registry, 'rxkube_shard_owned_slots', 'Slots of the hash space this replica reconciles.', ['controller']);
  const ranges = gaugeOn(registry, 'rxkube_shard_owned_ranges', 'Contiguous hash ranges those slots make.', ['controller']);
  const keys = scrapedGaugeOn(registry, 'rxkube_shard_owned_keys', 'Primary keys in the cache that fall in this replica\'s slots.', ['controller']);
  const members = gaugeOn(registry, 'rxkube_shard_members', 'Live members of the sharded controller as this replica sees them.', ['controller']);
  const handoffs = counterOn(registry, 'rxkube_shard_handoffs_total', 'Slots this replica gained or released.', ['controller', 'direction']);
  const server = gaugeOn(registry, 'rxkube_shard_server_side_selector', '1 when the API server honours shardSelector, 0 when this replica filters on its side.', ['controller']);
  return {
    owned: (figures) => {
      slots.set({ controller }, figures.slots);
      ranges.set({ controller }, figures.ranges);
      members.set({ controller }, figures.members);
    },
    keys: (count) => {
      keys.updaters.add(() => keys.set({ controller }, count()));
    },
    handoffs: (direction, count) => {
      if (count > 0) handoffs.inc({ controller, direction }, count);
    },
    serverSide: (honoured) => server.set({ controller }, honoured ? 1 : 0),
  };
}
