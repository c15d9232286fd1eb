import type { Logger } from '../logger.js';
import type { KubeObject } from '../types.js';
import type { ShardRange } from '../util/shardHash.js';
import {
  formatShardSelector,
  matchesShardSelector,
  parseShardSelector,
  ShardSelectorError,
  shardSelectorOf,
  type ShardField,
  type ShardSelector,
} from '../util/shardSelector.js';
import type { ListWatchMonitor } from './listWatch.js';

/**
 * The share of a resource one source reads: a `shardSelector` text as KEP-5866 writes it, or the
 * hash ranges of one field a replica owns (`{ by: 'uid', ranges }`). Ranges empty: it owns nothing.
 */
export type ShardSelection = string | { readonly by: ShardField; readonly ranges: readonly ShardRange[] };

/**
 * At most this many ranges are sent in a `shardSelector` (about 6 KB of URL): a replica of many
 * slots owns hundreds of scattered ranges, whose selector (25 KB at 1,024 slots and 2 replicas)
 * would pass the URL limits of proxies in front of an API server and of Node's own servers.
 */
export const maxSentShardRanges = 64;

/** A selection checked and written out once: what is sent, and what is matched on this side. */
export interface ResolvedShard {
  /** The `shardSelector` query parameter; `''` when the selection owns nothing (then nothing is sent). */
  readonly text: string;
  /** What this source keeps: exactly the selection. */
  readonly selector: ShardSelector;
  /** The selection's own text: two selections with one cover (`text`) still differ here. */
  readonly key: string;
  /**
   * Whether `text` says exactly `selector`. When not (more ranges than `maxSentShardRanges`),
   * it is a superset, the ranges bridged across their smallest gaps, and what a server filtered
   * by it is tested here too.
   */
  readonly exact: boolean;
}

/** `ranges` sorted, with those that overlap or touch joined: the same set of hashes. */
function joinedRanges(ranges: readonly ShardRange[]): ShardRange[] {
  const sorted = [...ranges].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const joined: ShardRange[] = [];
  for (const r of sorted) {
    const last = joined[joined.length - 1];
    if (last !== undefined && r.start <= last.end) joined[joined.length - 1] = { start: last.start, end: r.end > last.end ? r.end : last.end };
    else joined.push(r);
  }
  return joined;
}

/**
 * At most `max` ranges covering `ranges`: sorted, touching ones joined, then the smallest gaps
 * bridged until few enough remain (what they add is the least of the space any such cover adds).
 */
export function coveringRanges(ranges: readonly ShardRange[], max: number): ShardRange[] {
  if (!(Number.isInteger(max) && max >= 1)) throw new RangeError(`coveringRanges: max must be a whole number ≥ 1, got ${max}`);
  return bridged(joinedRanges(ranges), max);
}

/** `joined` (sorted, none touching) with its smallest gaps bridged until at most `max` (≥ 1) remain. */
function bridged(joined: ShardRange[], max: number): ShardRange[] {
  if (joined.length <= max) return joined;
  // The gaps after each range but the last, smallest first (ties: the lower one first, so the result is stable).
  const gaps = joined.slice(0, -1).map((r, i) => ({ i, size: (joined[i + 1] as ShardRange).start - r.end }));
  gaps.sort((a, b) => (a.size < b.size ? -1 : a.size > b.size ? 1 : a.i - b.i));
  const closed = new Set(gaps.slice(0, joined.length - max).map((g) => g.i));
  const out: ShardRange[] = [];
  let start = (joined[0] as ShardRange).start;
  joined.forEach((r, i) => {
    if (closed.has(i)) return;
    out.push({ start, end: r.end });
    const next = joined[i + 1];
    if (next !== undefined) start = next.start;
  });
  return out;
}

/** Checks `selection` and writes its text; a malformed selector throws naming the source and what is wrong. */
export function resolveShard(selection: ShardSelection, resource: string): ResolvedShard {
  if (typeof selection === 'string') {
    try {
      const selector = parseShardSelector(selection);
      if (selector.terms.length === 0) throw new ShardSelectorError(selection, 'an empty shard selector selects everything: leave shardSelector out instead', 0);
      return { text: selection, selector, key: selection, exact: true };
    } catch (error) {
      if (error instanceof ShardSelectorError) throw new ShardSelectorError(selection, `listWatch of ${resource}: ${error.detail}`, error.position);
      throw error;
    }
  }
  for (const r of selection.ranges) {
    if (!(r.start < r.end)) throw new RangeError(`listWatch of ${resource}: shard range [${r.start}, ${r.end}) is empty or reversed`);
  }
  const selector = shardSelectorOf(selection.by, selection.ranges);
  // Touching ranges sent joined: the same hashes in fewer terms.
  const joined = joinedRanges(selection.ranges);
  const exact = joined.length <= maxSentShardRanges;
  const sent = bridged(joined, maxSentShardRanges);
  return { text: formatShardSelector(shardSelectorOf(selection.by, sent)), selector, key: formatShardSelector(selector), exact };
}

/** Whether a list answer's metadata carries `shardInfo`: the server applied the selector. */
function hasShardInfo(metadata: unknown): boolean {
  const info = (metadata as { shardInfo?: unknown } | null | undefined)?.shardInfo;
  return info !== null && typeof info === 'object';
}

/**
 * One source's shard, while it runs: what it sends, and whether it must filter what it receives.
 *
 * The server's answer decides (KEP-5866): a list answer with `metadata.shardInfo` was filtered by
 * the server, and what follows it is trusted as is; one without it came from a server that ignored
 * the parameter (no `ShardedListAndWatch`), so every object is tested here with the same FNV-1a
 * hash and the ones outside the ranges are dropped before anything downstream sees them. Watch
 * events follow the mode of the last list. A selection of more ranges than `maxSentShardRanges`
 * is sent as a superset, so what comes is always tested here, shardInfo or not. A streaming list
 * carries no `shardInfo`, so it is always filtered here too (a no-op if the server did filter).
 *
 * Dropping watch events is exact because both fields that can be hashed are immutable: an object's
 * `uid` and `namespace` never change, so a `Modified` cannot move an object into or out of the
 * ranges, and an object recreated under the same key has a new uid and is judged anew. Only a change
 * of the ranges moves objects, and that re-lists (see `listWatch`).
 *
 * The mode is said once when it is first known and again only when it changes: at warn for
 * client-side filtering (every object of the resource still travels to this replica), at info for
 * server-side, and through the monitor's `shardFilter`.
 */
export class SourceShard {
  /** Whether the last list came filtered by the server; undefined before the first answer. */
  private serverSide: boolean | undefined;

  constructor(
    readonly shard: ResolvedShard,
    private readonly resource: string,
    private readonly logger: Logger,
    private readonly monitor: ListWatchMonitor,
    /** Shared by the sources one selection after another: the mode last reported. */
    private readonly reported: { where?: 'server' | 'client' },
  ) {}

  /** A list item, with the list's metadata as far as it had arrived: kept, or outside the ranges. */
  keepsListed(object: KubeObject, listMetadata: unknown): boolean {
    return (this.shard.exact && hasShardInfo(listMetadata)) || matchesShardSelector(this.shard.selector, object);
  }

  /** A watch event's object: kept, or outside the ranges (tested unless the server filtered by exactly them). */
  keepsWatched(object: KubeObject): boolean {
    return (this.shard.exact && this.serverSide === true) || matchesShardSelector(this.shard.selector, object);
  }

  /** A list page ended with this metadata (undefined: a streaming list, which cannot say). */
  listed(metadata: unknown): void {
    this.serverSide = hasShardInfo(metadata);
    this.report(this.serverSide ? 'server' : 'client', metadata === undefined);
  }

  private report(where: 'server' | 'client', streaming: boolean): void {
    if (this.reported.where === where) return;
    this.reported.where = where;
    const fields = { resource: this.resource, shardSelector: this.shard.text };
    if (where === 'server') {
      this.logger.info(
        fields,
        this.shard.exact
          ? 'the server honours shardSelector (shardInfo in its list answer): listing and watching only this shard'
          : 'the server honours shardSelector (shardInfo in its list answer): listing and watching a cover of this shard (its ranges bridged to fewer), the rest dropped here',
      );
    } else if (streaming) {
      this.logger.warn(fields, 'a streaming list does not say whether the server honours shardSelector: filtering on the client side as well');
    } else {
      this.logger.warn(fields, 'the server ignored shardSelector (no shardInfo in its list answer): filtering on the client side; every object of the resource still reaches this replica');
    }
    this.monitor.shardFilter?.(this.resource, where);
  }
}
