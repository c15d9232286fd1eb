import { celFunc, celMethod, CelScalar, isCelList, isCelMap, isCelUint, listType, mapType, type CelFunc, type CelList, type CelMap, type CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { RE2JS } from '@bufbuild/re2';
import { celCompare, celEquals } from './celValueOps.js';
import { formatFunctions } from './formatLibrary.js';
import { addressTests, formatAddress, masked, parseAddress, parsePrefix, prefixContains, type Address, type Prefix } from './ip.js';
import { optionalChain, optionalIndex, optionalSelect } from './optionalSyntax.js';
import { integerToNanos, parseQuantity, quantityIsInteger, quantityToFloat, quantityToInteger } from './quantity.js';
import { parseUrl, type ParsedUrl } from './url.js';

/**
 * The functions CRD validation rules may call besides CEL's standard ones,
 * as kube-apiserver 1.32 declares them for `x-kubernetes-validations`:
 * the strings extension, and Kubernetes's lists, regex, URL, sets,
 * quantity, IP, CIDR and format libraries, and optional values (those
 * `optionalOldSelf` gives `oldSelf`, and CEL's optional syntax). Values of the library's own types (a URL, a quantity,
 * an optional) travel through the evaluator as tagged maps, so that `==`
 * between two of them compares what they mean.
 */

const STRING = CelScalar.STRING;
const INT = CelScalar.INT;
const DOUBLE = CelScalar.DOUBLE;
const BOOL = CelScalar.BOOL;
const DYN = CelScalar.DYN;
const LIST = listType(DYN);
const MAP = mapType(STRING, DYN);

const quantityTag = '@kubernetes.Quantity';
const ipTag = '@kubernetes.IP';
const cidrTag = '@kubernetes.CIDR';
const urlTag = '@kubernetes.URL';
const optionalTag = '@optional';

type Tagged = Record<string, string | boolean | CelValue>;

function items(list: CelList): CelValue[] {
  return [...list];
}

function noOverload(name: string): Error {
  return new Error(`found no matching overload for '${name}'`);
}

// --- lists ---------------------------------------------------------------------------------

function ordered(name: string, list: CelList): CelValue[] {
  const values = items(list);
  for (let i = 1; i < values.length; i += 1) if (celCompare(values[0] as CelValue, values[i] as CelValue) === undefined) throw noOverload(name);
  return values;
}

function extreme(name: string, list: CelList, sign: 1 | -1): CelValue {
  const values = ordered(name, list);
  if (values.length === 0) throw new Error(`${name}(list) called on an empty list`);
  return values.reduce((best, v) => ((celCompare(v, best) ?? 0) * sign > 0 ? v : best));
}

function sum(list: CelList): bigint | number {
  const values = items(list);
  if (values.every((v) => typeof v === 'bigint')) return (values as bigint[]).reduce((a, b) => a + b, 0n);
  if (values.every((v) => typeof v === 'number')) return (values as number[]).reduce((a, b) => a + b, 0);
  throw noOverload('sum');
}

const lists: CelFunc[] = [
  celMethod('isSorted', LIST, [], BOOL, function isSorted(this: CelList) {
    const values = ordered('isSorted', this);
    return values.every((v, i) => i === 0 || (celCompare(values[i - 1] as CelValue, v) ?? 0) <= 0);
  }),
  celMethod('sum', LIST, [], DYN, function listSum(this: CelList) {
    return sum(this);
  }),
  celMethod('min', LIST, [], DYN, function listMin(this: CelList) {
    return extreme('min', this, -1);
  }),
  celMethod('max', LIST, [], DYN, function listMax(this: CelList) {
    return extreme('max', this, 1);
  }),
  celMethod('indexOf', LIST, [DYN], INT, function indexOf(this: CelList, value: CelValue) {
    return BigInt(items(this).findIndex((v) => celEquals(v, value)));
  }),
  celMethod('lastIndexOf', LIST, [DYN], INT, function lastIndexOf(this: CelList, value: CelValue) {
    return BigInt(items(this).findLastIndex((v) => celEquals(v, value)));
  }),
];

// --- sets ----------------------------------------------------------------------------------

const contains = (list: CelList, value: CelValue): boolean => items(list).some((v) => celEquals(v, value));

const sets: CelFunc[] = [
  celFunc('sets.contains', [LIST, LIST], BOOL, (a: CelList, b: CelList) => items(b).every((v) => contains(a, v))),
  celFunc('sets.equivalent', [LIST, LIST], BOOL, (a: CelList, b: CelList) => items(b).every((v) => contains(a, v)) && items(a).every((v) => contains(b, v))),
  celFunc('sets.intersects', [LIST, LIST], BOOL, (a: CelList, b: CelList) => items(b).some((v) => contains(a, v))),
];

// --- regex ---------------------------------------------------------------------------------

/** The matches of `pattern` in `text`, leftmost first, as Go's regexp FindAllString returns them. */
function findAll(text: string, pattern: string, limit: number): string[] {
  let regex: RegExp;
  try {
    // RE2 (what kube uses) checks the syntax; JavaScript's engine, which agrees on RE2's syntax, finds the matches.
    new RE2JS(pattern);
    regex = new RegExp(pattern.replace(/^\(\?i\)/, ''), pattern.startsWith('(?i)') ? 'giu' : 'gu');
  } catch (error) {
    throw new Error(`error parsing regexp: ${(error as Error).message}`);
  }
  const out: string[] = [];
  for (const m of text.matchAll(regex)) {
    if (limit >= 0 && out.length >= limit) break;
    out.push(m[0]);
  }
  return out;
}

const regex: CelFunc[] = [
  celMethod('find', STRING, [STRING], STRING, function find(this: string, pattern: string) {
    return findAll(this, pattern, 1)[0] ?? '';
  }),
  celMethod('findAll', STRING, [STRING], LIST, function findAllMatches(this: string, pattern: string) {
    return findAll(this, pattern, -1);
  }),
  celMethod('findAll', STRING, [STRING, INT], LIST, function findSome(this: string, pattern: string, limit: bigint) {
    return findAll(this, pattern, Number(limit));
  }),
];

// --- URLs ----------------------------------------------------------------------------------

function urlOf(map: CelMap): ParsedUrl {
  const href = map.get(urlTag);
  if (typeof href !== 'string') throw noOverload('url method');
  return parseUrl(href) as ParsedUrl;
}

const urls: CelFunc[] = [
  celFunc('url', [STRING], MAP, (text: string): Tagged => {
    if (parseUrl(text) === undefined) throw new Error(`URL parse error during conversion from string: parse "${text}": invalid URI for request`);
    return { [urlTag]: text };
  }),
  celFunc('isURL', [STRING], BOOL, (text: string) => parseUrl(text) !== undefined),
  ...(['scheme', 'host', 'hostname', 'port', 'escapedPath'] as const).map((part) =>
    celMethod(`get${part[0]?.toUpperCase() ?? ''}${part.slice(1)}`, MAP, [], STRING, function urlPart(this: CelMap) {
      return urlOf(this)[part];
    }),
  ),
  celMethod('getQuery', MAP, [], MAP, function getQuery(this: CelMap) {
    return urlOf(this).query;
  }),
];

// --- quantities ----------------------------------------------------------------------------

function nanosOf(value: CelValue, name: string): bigint {
  if (typeof value === 'bigint') return integerToNanos(value);
  if (isCelMap(value)) {
    const nanos = value.get(quantityTag);
    if (typeof nanos === 'string') return BigInt(nanos);
  }
  throw noOverload(name);
}

const quantityOf = (nanos: bigint): Tagged => ({ [quantityTag]: nanos.toString() });

function quantityMethod<R extends typeof BOOL | typeof INT | typeof DOUBLE | typeof MAP>(name: string, result: R, impl: (nanos: bigint) => boolean | bigint | number | Tagged): CelFunc {
  return celMethod(name, MAP, [], result, function quantityUnary(this: CelMap) {
    return impl(nanosOf(this, name)) as never;
  });
}

function quantityBinary(name: string, result: typeof BOOL | typeof INT | typeof MAP, impl: (a: bigint, b: bigint) => boolean | bigint | Tagged): CelFunc[] {
  return [MAP, INT].map((argType) =>
    celMethod(name, MAP, [argType], result, function quantityWith(this: CelMap, other: CelValue) {
      return impl(nanosOf(this, name), nanosOf(other, name)) as never;
    }),
  );
}

const quantities: CelFunc[] = [
  celFunc('quantity', [STRING], MAP, (text: string): Tagged => {
    const nanos = parseQuantity(text);
    if (nanos === undefined) throw new Error('quantities must match the regular expression \'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$\'');
    return quantityOf(nanos);
  }),
  celFunc('isQuantity', [STRING], BOOL, (text: string) => parseQuantity(text) !== undefined),
  quantityMethod('sign', INT, (n) => BigInt(n > 0n ? 1 : n < 0n ? -1 : 0)),
  quantityMethod('isInteger', BOOL, quantityIsInteger),
  quantityMethod('asInteger', INT, (n) => {
    if (!quantityIsInteger(n)) throw new Error('cannot convert value to integer');
    return quantityToInteger(n);
  }),
  quantityMethod('asApproximateFloat', DOUBLE, quantityToFloat),
  ...quantityBinary('add', MAP, (a, b) => quantityOf(a + b)),
  ...quantityBinary('sub', MAP, (a, b) => quantityOf(a - b)),
  ...quantityBinary('compareTo', INT, (a, b) => BigInt(a < b ? -1 : a > b ? 1 : 0)),
  ...quantityBinary('isGreaterThan', BOOL, (a, b) => a > b),
  ...quantityBinary('isLessThan', BOOL, (a, b) => a < b),
];

// --- IP addresses and CIDRs ----------------------------------------------------------------

const ipValue = (address: Address): Tagged => ({ [ipTag]: formatAddress(address) });
const cidrValue = (prefix: Prefix): Tagged => ({ [cidrTag]: `${formatAddress(prefix.address)}/${prefix.bits}` });

function tagged(value: CelValue, tag: string, name: string): string {
  const text = isCelMap(value) ? value.get(tag) : undefined;
  if (typeof text !== 'string') throw noOverload(name);
  return text;
}

function addressOf(value: CelValue, name: string): Address {
  const text = typeof value === 'string' ? value : tagged(value, ipTag, name);
  const address = parseAddress(text);
  if (address === undefined) throw new Error(`IP Address ${JSON.stringify(text)} parse error during conversion from string`);
  return address;
}

function prefixOf(value: CelValue, name: string): Prefix {
  const text = typeof value === 'string' ? value : tagged(value, cidrTag, name);
  const prefix = parsePrefix(text);
  if (prefix === undefined) throw new Error(`network address ${JSON.stringify(text)} parse error during conversion from string`);
  return prefix;
}

const ipTests = Object.entries(addressTests).map(([name, test]) =>
  celMethod(name, MAP, [], BOOL, function ipTest(this: CelMap) {
    return test(addressOf(this, name));
  }),
);

const ips: CelFunc[] = [
  celFunc('ip', [STRING], MAP, (text: string) => ipValue(addressOf(text, 'ip'))),
  celFunc('isIP', [STRING], BOOL, (text: string) => parseAddress(text) !== undefined),
  celFunc('ip.isCanonical', [STRING], BOOL, (text: string) => formatAddress(addressOf(text, 'ip.isCanonical')) === text),
  celMethod('family', MAP, [], INT, function family(this: CelMap) {
    return BigInt(addressOf(this, 'family').family);
  }),
  ...ipTests,
  celFunc('cidr', [STRING], MAP, (text: string) => cidrValue(prefixOf(text, 'cidr'))),
  celFunc('isCIDR', [STRING], BOOL, (text: string) => parsePrefix(text) !== undefined),
  ...[STRING, MAP].map((argType) =>
    celMethod('containsIP', MAP, [argType], BOOL, function containsIP(this: CelMap, other: CelValue) {
      return prefixContains(prefixOf(this, 'containsIP'), addressOf(other, 'containsIP'));
    }),
  ),
  ...[STRING, MAP].map((argType) =>
    celMethod('containsCIDR', MAP, [argType], BOOL, function containsCIDR(this: CelMap, other: CelValue) {
      const outer = prefixOf(this, 'containsCIDR');
      const inner = prefixOf(other, 'containsCIDR');
      return inner.bits >= outer.bits && prefixContains(outer, inner.address);
    }),
  ),
  celMethod('ip', MAP, [], MAP, function prefixAddress(this: CelMap) {
    return ipValue(prefixOf(this, 'ip').address);
  }),
  celMethod('masked', MAP, [], MAP, function maskedPrefix(this: CelMap) {
    return cidrValue(masked(prefixOf(this, 'masked')));
  }),
  celMethod('prefixLength', MAP, [], INT, function prefixLength(this: CelMap) {
    return BigInt(prefixOf(this, 'prefixLength').bits);
  }),
  celFunc('string', [MAP], STRING, (value: CelMap) => {
    const text = value.get(ipTag) ?? value.get(cidrTag);
    if (typeof text !== 'string') throw noOverload('string');
    return text;
  }),
];

// --- optionals (optionalOldSelf, optional.of, a.?b, a[?k]) ------------------------------------

function optionalParts(map: CelMap, name: string): { present: boolean; value: CelValue | undefined } {
  if (map.get(optionalTag) !== true) throw noOverload(name);
  return { present: map.has('value'), value: map.get('value') };
}

const optionals: CelFunc[] = [
  celMethod('hasValue', MAP, [], BOOL, function hasValue(this: CelMap) {
    return optionalParts(this, 'hasValue').present;
  }),
  celMethod('value', MAP, [], DYN, function optionalValue(this: CelMap) {
    const { present, value } = optionalParts(this, 'value');
    if (!present) throw new Error('optional.none() dereference');
    return value as CelValue;
  }),
  celMethod('orValue', MAP, [DYN], DYN, function orValue(this: CelMap, fallback: CelValue) {
    const { present, value } = optionalParts(this, 'orValue');
    return present ? (value as CelValue) : fallback;
  }),
  celMethod('or', MAP, [MAP], MAP, function or(this: CelMap, other: CelMap) {
    optionalParts(other, 'or');
    return optionalParts(this, 'or').present ? this : other;
  }),
  celFunc('optional.of', [DYN], MAP, (value: CelValue) => optionalValue(value) as Tagged),
  celFunc('optional.none', [], MAP, () => optionalValue(undefined) as Tagged),
  celFunc('optional.ofNonZeroValue', [DYN], MAP, (value: CelValue) => optionalValue(isZero(value) ? undefined : value) as Tagged),
  celFunc(optionalSelect, [DYN, DYN], MAP, (target: CelValue, key: CelValue) => optionalAccess(target, key, false, '_?._')),
  celFunc(optionalIndex, [DYN, DYN], MAP, (target: CelValue, key: CelValue) => optionalAccess(target, key, false, '_[?_]')),
  celFunc(optionalChain, [DYN, DYN], MAP, (target: CelValue, key: CelValue) => optionalAccess(target, key, true, '_[_]')),
];

function isZero(value: CelValue): boolean {
  if (value === null || value === false || value === '' || value === 0 || value === 0n) return true;
  if (isCelUint(value)) return value.value === 0n;
  if (value instanceof Uint8Array || isCelList(value) || isCelMap(value)) return (value instanceof Uint8Array ? value.length : value.size) === 0;
  return false;
}

/** `a.?b` and `a[?k]` (strict: a selection on an optional, `a.?b.c`), on a map, list or an optional of one. */
function optionalAccess(target: CelValue, key: CelValue, strict: boolean, name: string): Tagged {
  let container = target;
  if (isCelMap(container) && container.get(optionalTag) === true) {
    const { present, value } = optionalParts(container, name);
    if (!present) return optionalValue(undefined) as Tagged;
    container = value as CelValue;
  }
  let found: CelValue | undefined;
  if (isCelMap(container)) {
    if (typeof key !== 'string' && typeof key !== 'bigint' && typeof key !== 'boolean' && !isCelUint(key)) throw noOverload(name);
    found = container.get(key);
    if (found === undefined && strict) throw new Error(`no such key: ${String(key)}`);
  } else if (isCelList(container)) {
    const index = typeof key === 'bigint' ? key : isCelUint(key) ? key.value : typeof key === 'number' && Number.isInteger(key) ? BigInt(key) : undefined;
    if (index === undefined) throw noOverload(name);
    found = index >= 0n && index < BigInt(container.size) ? container.get(Number(index)) : undefined;
    if (found === undefined && strict) throw new Error(`index out of bounds: ${index}`);
  } else throw noOverload(name);
  return optionalValue(found) as Tagged;
}

/** An optional as `oldSelf` is bound under `optionalOldSelf`: none before the object existed. */
export function optionalValue(value: unknown): Record<string, unknown> {
  return value === undefined ? { [optionalTag]: true } : { [optionalTag]: true, value };
}

export const kubeFunctions: readonly CelFunc[] = [...strings, ...lists, ...sets, ...regex, ...urls, ...quantities, ...ips, ...optionals, ...formatFunctions(optionalValue)];

/** The names a rule may call (the standard ones, the macros and the library above), for the compile-time check. */
export const macroNames: ReadonlySet<string> = new Set(['has', 'all', 'exists', 'exists_one', 'map', 'filter']);
