import { maxCost, saturatingAdd, saturatingMultiply } from './costModel.js';

/**
 * A range of costs or of sizes (cel-go's `CostEstimate` and
 * `SizeEstimate`), with the arithmetic cel-go does on them: sums and
 * products saturate at uint64's maximum, and a cost factor rounds up.
 */
export interface Range {
  readonly min: number;
  readonly max: number;
}

export const zero: Range = { min: 0, max: 0 };
export const one: Range = { min: 1, max: 1 };
export const unknownSize: Range = { min: 0, max: maxCost };

export function exactly(n: number): Range {
  return { min: n, max: n };
}

export function add(a: Range, b: Range): Range {
  return { min: saturatingAdd(a.min, b.min), max: saturatingAdd(a.max, b.max) };
}

export function sum(ranges: readonly Range[]): Range {
  return ranges.reduce(add, zero);
}

export function multiply(a: Range, b: Range): Range {
  return { min: saturatingMultiply(a.min, b.min), max: saturatingMultiply(a.max, b.max) };
}

/** `ceil(n × factor)` at both ends (cel-go's MultiplyByCostFactor). */
export function scale(a: Range, factor: number): Range {
  return { min: Math.min(maxCost, Math.ceil(a.min * factor)), max: Math.min(maxCost, Math.ceil(a.max * factor)) };
}

export function union(a: Range, b: Range): Range {
  return { min: Math.min(a.min, b.min), max: Math.max(a.max, b.max) };
}

/** CEL's cost of walking a string: a tenth of a unit per character. */
export const stringTraversalFactor = 0.1;
/** CEL's guess of a regex's cost from its length: a quarter of a unit per character. */
export const regexLengthFactor = 0.25;
