import { parseShardSelector, ShardSelectorError, type ShardSelector } from '../../util/shardSelector.js';
import { badRequest } from '../api/statusError.js';

/**
 * The `shardSelector` list option of KEP-5866 (feature gate `ShardedListAndWatch`), as this
 * server takes it on lists and watches: parsed with the grammar of `src/util/shardSelector.ts`,
 * a malformed one answered 400 BadRequest with the parser's field-error message.
 *
 * With the gate off the parameter is ignored altogether, as a server without the feature ignores
 * an unknown query parameter: everything is served and no list carries `shardInfo`, which is how a
 * client tells that it must filter on its own side. An empty selector selects everything and is
 * not echoed either.
 */
export function parseShardFilter(text: string | null, enabled: boolean): ShardSelector | undefined {
  if (!enabled || text === null) return undefined;
  let selector: ShardSelector;
  try {
    selector = parseShardSelector(text);
  } catch (error) {
    if (error instanceof ShardSelectorError) throw badRequest(error.message);
    throw error;
  }
  return selector.terms.length === 0 ? undefined : selector;
}
