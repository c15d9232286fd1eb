/**
 * Values shown in kube's messages the way Go's `fmt` prints them, so that a
 * message from this server reads byte for byte like kube-apiserver's.
 */

/** A float64 as Go's `%v` prints it: the shortest digits, in exponent form when the exponent is below -4 or at least 6 (`1e+06`). */
export function goFloat(value: number): string {
  if (!Number.isFinite(value)) return value > 0 ? '+Inf' : value < 0 ? '-Inf' : 'NaN';
  if (value === 0) return Object.is(value, -0) ? '-0' : '0';
  const [mantissa, exponentText] = value.toExponential().split('e') as [string, string];
  const exponent = Number(exponentText);
  if (exponent < -4 || exponent >= 6) {
    const sign = exponent < 0 ? '-' : '+';
    const digits = String(Math.abs(exponent)).padStart(2, '0');
    return `${mantissa}e${sign}${digits}`;
  }
  return String(value);
}

/** A bound of a schema (a float64 in kube's types) next to the value it was checked against. */
export function goBound(bound: number, valueIsInteger: boolean): string {
  return valueIsInteger && Number.isInteger(bound) ? String(bound) : goFloat(bound);
}

/** A string as Go's `%q` quotes it. */
export function goQuote(text: string): string {
  return JSON.stringify(text).replace(/\\u00([0-9a-f]{2})/g, '\\x$1').replace(/\u007f/g, '\\x7f');
}

function goNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : goFloat(value);
}

/** A decoded JSON value as Go's `%#v` prints it (maps with sorted keys). */
export function goSharpV(value: unknown): string {
  if (value === null || value === undefined) return 'interface {}(nil)';
  if (typeof value === 'string') return goQuote(value);
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[]interface {}{${value.map(goSharpV).join(', ')}}`;
  const entries = Object.keys(value as object)
    .sort()
    .map((key) => `${goQuote(key)}:${goSharpV((value as Record<string, unknown>)[key])}`);
  return `map[string]interface {}{${entries.join(', ')}}`;
}

/** A rejected value as kube 1.32's field errors show it: strings quoted, numbers and booleans bare, nil as "null", the rest `%#v`. */
export function goShown(value: unknown): string {
  if (value === null || value === undefined) return '"null"';
  if (typeof value === 'number') return goNumber(value);
  if (typeof value === 'boolean') return String(value);
  return goSharpV(value);
}
