import { isCelList, isCelMap, isCelUint, type CelValue } from '@bufbuild/cel';

/**
 * Equality and ordering of CEL values for the library functions that need
 * them (sets, `indexOf`, `isSorted`, `min`, `max`), with CEL's rules: ints,
 * uints and doubles compare by numeric value, lists and maps by content.
 */

function numeric(value: CelValue): number | bigint | undefined {
  if (typeof value === 'bigint' || typeof value === 'number') return value;
  if (isCelUint(value)) return value.value;
  return undefined;
}

export function celEquals(a: CelValue, b: CelValue): boolean {
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined && nb !== undefined) return compareNumbers(na, nb) === 0;
  if (isCelList(a) && isCelList(b)) {
    if (a.size !== b.size) return false;
    for (let i = 0; i < a.size; i += 1) if (!celEquals(a.get(i) as CelValue, b.get(i) as CelValue)) return false;
    return true;
  }
  if (isCelMap(a) && isCelMap(b)) {
    if (a.size !== b.size) return false;
    for (const [key, value] of a) {
      const other = b.get(key);
      if (other === undefined || !celEquals(value, other)) return false;
    }
    return true;
  }
  if (a instanceof Uint8Array && b instanceof Uint8Array) return a.length === b.length && a.every((byte, i) => byte === b[i]);
  return a === b;
}

function compareNumbers(a: number | bigint, b: number | bigint): number {
  if (typeof a === 'bigint' && typeof b === 'bigint') return a < b ? -1 : a > b ? 1 : 0;
  const x = Number(a);
  const y = Number(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** -1, 0 or 1; undefined when CEL defines no order between the two (which the caller reports as no overload). */
export function celCompare(a: CelValue, b: CelValue): number | undefined {
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined && nb !== undefined) return compareNumbers(na, nb);
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  return undefined;
}
