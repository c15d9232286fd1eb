import { isPlainObject } from '../../util/json.js';

/**
 * A JSON value as Go's `fmt` prints it with `%+v` once decoded into `interface{}`: objects as
 * `map[a:1 b:x]` with sorted keys, lists as `[1 2]`, strings bare, numbers as float64 (`%g`:
 * `80`, `0.5`, `1e+06`), null as `<nil>`. Kube quotes that text in some errors (a strategic
 * merge patch that fails strict decoding), so the server prints it the same way.
 */

function goFloat(n: number): string {
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : n < 0 ? '-Inf' : 'NaN';
  if (n === 0) return Object.is(n, -0) ? '-0' : '0';
  const [mantissa, expText] = n.toExponential().split('e');
  const exp = Number(expText);
  const digits = mantissa.replace('-', '').replace('.', '').length;
  // strconv's shortest 'g': exponent form when exp < -4 or exp >= max(precision), precision 6 unless fewer digits fill it.
  let eprec = 6;
  if (eprec > digits && digits >= exp + 1) eprec = digits;
  if (exp < -4 || exp >= eprec) {
    const sign = exp < 0 ? '-' : '+';
    return `${mantissa}e${sign}${String(Math.abs(exp)).padStart(2, '0')}`;
  }
  return String(n);
}

export function goValue(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return goFloat(value);
  if (typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return `[${value.map(goValue).join(' ')}]`;
  if (isPlainObject(value)) {
    const keys = Object.keys(value).sort();
    return `map[${keys.map((k) => `${k}:${goValue(value[k])}`).join(' ')}]`;
  }
  return String(value);
}
