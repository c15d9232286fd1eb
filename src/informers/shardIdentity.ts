import { isObservable, type Observable } from 'rxjs';
import type { ShardSelection } from '../sources/sourceShard.js';
import { formatShardSelector, shardSelectorOf } from '../util/shardSelector.js';

/**
 * What tells informers' shard selections apart, for a factory's sharing: a selector text as
 * written, ranges as the text they are sent as (equal ranges share one informer), and an
 * Observable of selections by identity (the same Observable shares; another does not, its future
 * values being unknown). `''` for an unsharded informer.
 */
export class ShardIdentities {
  private readonly observables = new WeakMap<object, string>();
  private count = 0;

  of(selection: ShardSelection | Observable<ShardSelection> | undefined): string {
    if (selection === undefined) return '';
    if (typeof selection === 'string') return `shard:${selection}`;
    if (!isObservable(selection)) return `shard:${formatShardSelector(shardSelectorOf(selection.by, selection.ranges))}`;
    let name = this.observables.get(selection);
    if (name === undefined) {
      name = `shards#${++this.count}`;
      this.observables.set(selection, name);
    }
    return name;
  }
}
