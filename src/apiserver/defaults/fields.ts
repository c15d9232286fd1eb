import { isPlainObject } from '../../util/json.js';

/** The small readers every defaulter uses: kube defaults a field that is nil or the zero string. */

export type Plain = Record<string, unknown>;

export function unset(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

/** The objects of a list, none when it is no list. */
export function objects(list: unknown): Plain[] {
  return Array.isArray(list) ? (list.filter(isPlainObject) as Plain[]) : [];
}
