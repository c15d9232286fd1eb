import { CompactCodec } from '../compact/compactCodec.js';
import { dropManagedFields } from './transforms.js';

/**
 * The codec of a compact source whose transform is `transform`.
 * `dropManagedFields` is done on the bytes, so its objects are frozen as
 * they are built (the transform, run on them still, finds nothing to do).
 */
export function compactCodec(transform: ((object: never) => unknown) | undefined): CompactCodec {
  const drops = transform === dropManagedFields;
  return new CompactCodec({ dropManagedFields: drops, transformed: transform !== undefined && !drops });
}
