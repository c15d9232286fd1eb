/**
 * Kubernetes resource quantities (`500m`, `1Gi`, `1e3`) as kube's
 * `resource.Quantity` parses them, held exactly as a count of nano-units so
 * that `1Gi == 1024Mi` and comparisons never round.
 */

const binarySuffixes: Readonly<Record<string, bigint>> = {
  Ki: 1n << 10n,
  Mi: 1n << 20n,
  Gi: 1n << 30n,
  Ti: 1n << 40n,
  Pi: 1n << 50n,
  Ei: 1n << 60n,
};
const decimalExponents: Readonly<Record<string, number>> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const quantityPattern = /^([+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))((?:[KMGTPE]i)|[numkMGTPE]?|[eE][+-]?[0-9]+)$/;
const nanosPerUnit = 1_000_000_000n;

/** The quantity's value in nano-units, or undefined when `text` is no quantity. */
export function parseQuantity(text: string): bigint | undefined {
  const m = quantityPattern.exec(text);
  if (m === null) return undefined;
  const number = m[1] as string;
  const suffix = m[2] as string;
  const negative = number.startsWith('-');
  const unsigned = number.replace(/^[+-]/, '');
  const [whole, fraction = ''] = unsigned.split('.') as [string, string?];
  let exponent = -fraction.length;
  let mantissa = BigInt(`${whole}${fraction}` || '0');
  let factor = 1n;
  if (binarySuffixes[suffix] !== undefined) factor = binarySuffixes[suffix];
  else if (suffix.startsWith('e') || suffix.startsWith('E')) exponent += Number(suffix.slice(1));
  else exponent += decimalExponents[suffix] ?? 0;
  // Now value = mantissa * factor * 10^exponent; in nanos: * 10^9. Finer than a nano rounds up, as kube rounds.
  mantissa *= factor;
  const scale = exponent + 9;
  let nanos: bigint;
  if (scale >= 0) nanos = mantissa * 10n ** BigInt(scale);
  else {
    const divisor = 10n ** BigInt(-scale);
    nanos = mantissa / divisor + (mantissa % divisor === 0n ? 0n : 1n);
  }
  return negative ? -nanos : nanos;
}

export function quantityIsInteger(nanos: bigint): boolean {
  return nanos % nanosPerUnit === 0n && nanos / nanosPerUnit <= 2n ** 63n - 1n && nanos / nanosPerUnit >= -(2n ** 63n);
}

export function quantityToInteger(nanos: bigint): bigint {
  return nanos / nanosPerUnit;
}

export function quantityToFloat(nanos: bigint): number {
  return Number(nanos) / 1e9;
}

export function integerToNanos(value: bigint): bigint {
  return value * nanosPerUnit;
}
