import { isPlainObject } from '../../util/json.js';

/** The small readers every defaulter uses: kube defaults a field that is nil or the zero string. */

export type Plain = Record<string, unknown>;

export function unset(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

/**
 * The objects of a list that defaulting may write to, none when it is no list. A frozen item is
 * shared with the stored object, which was defaulted when stored: it is left as it is.
 */
export function objects(list: unknown): Plain[] {
  return Array.isArray(list) ? (list.filter((item) => isPlainObject(item) && !Object.isFrozen(item)) as Plain[]) : [];
}
