import { celFunc, celMethod, CelScalar, celType, isCelError, isCelList, isCelMap, type CelEnv, type CelFunc, type CelResult, type CelValue } from '@bufbuild/cel';
import { perCallLimit } from './costModel.js';
import { regexLengthFactor, stringTraversalFactor } from './costRange.js';

/**
 * What a rule actually costs as it runs, as kube-apiserver 1.32 counts it
 * (cel-go's CostTracker with Kubernetes's `CallCost`): the functions whose
 * cost depends on their arguments (string traversal, regex, list
 * membership, comparison, the Kubernetes string and list functions) are
 * replaced in the planned rule by metered twins that add what the call
 * costs to the meter, then call the real function. Everything else costs a
 * constant that costMeter.ts charges in bulk. When an evaluation goes over
 * the per-call limit (1,000,000), the next charge fails it with cel-go's
 * words, `operation cancelled: actual cost limit exceeded`.
 */

export const cancelled = 'operation cancelled: actual cost limit exceeded';

/** The running cost of the evaluation in progress (one per CRD version's rules; evaluation is synchronous). */
export interface Meter {
  cost: number;
  limit: number;
}

export function newMeter(): Meter {
  return { cost: 0, limit: perCallLimit };
}

export function charge(meter: Meter, n: number): void {
  meter.cost += n;
  if (meter.cost > meter.limit) throw new Error(cancelled);
}

/** The name a metered twin goes by in the planned rule. */
export const meteredName = (name: string): string => `rxkube.metered.${name}`;

const optionalTag = '@optional';
const kubeTags = ['@kubernetes.Quantity', '@kubernetes.IP', '@kubernetes.CIDR', '@kubernetes.URL', '@kubernetes.Format'];

/** cel-go's `actualSize`: a string's code points, bytes' length, a list's or map's entries; 1 for anything else (Kubernetes's own types too). */
const leadingSurrogates = /[\uD800-\uDBFF]/g;

function size(v: CelValue | undefined): number {
  // A code point beyond the BMP takes two UTF-16 units; the regex scan is native, unlike a loop over the characters.
  if (typeof v === 'string') return v.length - (v.match(leadingSurrogates)?.length ?? 0);
  if (v instanceof Uint8Array) return v.length;
  if (isCelList(v)) return v.size;
  if (isCelMap(v)) return isKubeValue(v) ? 1 : v.size;
  return 1;
}

function isKubeValue(v: CelValue | undefined): boolean {
  return isCelMap(v) && (v.has(optionalTag) || kubeTags.some((t) => v.has(t)));
}

const tenth = (n: number): number => Math.ceil(n * stringTraversalFactor);

/** Kubernetes's `traversalCost`: a tenth per character (rounded down), 1 per scalar, over everything a list or map holds. */
function traversal(v: CelValue | undefined): number {
  if (typeof v === 'string') return Math.floor(v.length * stringTraversalFactor);
  if (v instanceof Uint8Array) return Math.floor(v.length * stringTraversalFactor);
  if (isCelList(v)) {
    let n = 0;
    for (const item of v) n += traversal(item);
    return n;
  }
  if (isCelMap(v) && !isKubeValue(v)) {
    let n = 0;
    for (const [k, item] of v) n += traversal(k as CelValue) + traversal(item);
    return n;
  }
  return 1;
}

/** The actual cost of `name` on these arguments (`args[0]` is the receiver of a method, as cel-go passes it), given its result. */
export function actualCost(name: string, args: readonly CelValue[], result: CelValue | undefined): number {
  const [a, b] = args;
  switch (name) {
    case 'isSorted':
    case 'sum':
    case 'max':
    case 'min':
    case 'indexOf':
    case 'lastIndexOf':
      return traversal(a);
    case 'url':
    case 'lowerAscii':
    case 'upperAscii':
    case 'substring':
    case 'trim':
    case 'cidr':
    case 'isIP':
    case 'isCIDR':
    case 'quantity':
    case 'isQuantity':
    case 'startsWith':
    case 'endsWith':
    case 'strings.quote':
    case 'format':
      return tenth(size(a));
    case 'ip':
      return isKubeValue(a) ? 1 : tenth(size(a));
    case 'ip.isCanonical':
    case 'replace':
    case 'split':
      return Math.ceil(size(a) * 2 * stringTraversalFactor);
    case 'join':
      return Math.ceil(size(result) * 2 * stringTraversalFactor);
    case 'find':
    case 'findAll':
    case 'matches':
      return Math.ceil((1 + size(a)) * stringTraversalFactor) * Math.ceil(size(b) * regexLengthFactor);
    case 'containsIP':
    case 'containsCIDR': {
      let cost = tenth(size(a) * 2) + (name === 'containsCIDR' ? tenth(size(a)) + 1 : 0);
      if (typeof b === 'string') cost += tenth(size(b));
      return cost;
    }
    case 'validate':
      return Math.ceil((1 + size(b)) * stringTraversalFactor) * Math.ceil(128 * regexLengthFactor);
    case 'contains':
      return typeof a === 'string' ? tenth(size(a)) * tenth(size(b)) : 1;
    case '@in':
      return isCelList(b) ? size(b) : 1;
    case '_==_':
      if (isKubeValue(a)) return 1;
      return tenth(Math.min(size(a), size(b)));
    case '_!=_':
      return tenth(Math.min(size(a), size(b)));
    case '_<_':
    case '_<=_':
    case '_>_':
    case '_>=_':
      return (typeof a === 'string' && typeof b === 'string') || (a instanceof Uint8Array && b instanceof Uint8Array) ? tenth(Math.min(size(a), size(b))) : 1;
    case '_+_':
      return (typeof a === 'string' && typeof b === 'string') || (a instanceof Uint8Array && b instanceof Uint8Array) ? tenth(size(a) + size(b)) : 1;
    case 'bytes':
      return typeof a === 'string' ? tenth(size(a)) : 1;
    case 'string':
      return a instanceof Uint8Array ? tenth(size(a)) : 1;
    case 'sets.contains':
    case 'sets.intersects':
      return 1 + size(a) * size(b);
    case 'sets.equivalent':
      return 1 + 2 * size(a) * size(b);
    default:
      return 1;
  }
}

/** The functions charged by what they are called with. */
export const meteredFunctions: ReadonlySet<string> = new Set([
  'isSorted', 'sum', 'max', 'min', 'indexOf', 'lastIndexOf', 'url', 'lowerAscii', 'upperAscii', 'substring', 'trim', 'cidr', 'isIP', 'isCIDR',
  'quantity', 'isQuantity', 'startsWith', 'endsWith', 'strings.quote', 'format', 'ip', 'ip.isCanonical', 'replace', 'split', 'join', 'find',
  'findAll', 'matches', 'containsIP', 'containsCIDR', 'validate', 'contains', '@in', '_==_', '_!=_', '_<_', '_<=_', '_>_', '_>=_', '_+_',
  'bytes', 'string', 'sets.contains', 'sets.intersects', 'sets.equivalent',
]);

function noOverload(name: string, target: CelValue | undefined, args: readonly CelValue[]): Error {
  const shown = `${target !== undefined ? `${String(celType(target))}.` : ''}(${args.map((x) => celType(x).name).join(', ')})`;
  return new Error(`found no matching overload for '${name}' applied to '${shown}'`);
}

type FuncResolver = CelEnv['funcs'];

function delegate(funcs: FuncResolver, meter: Meter, name: string, target: CelValue | undefined, args: CelValue[]): CelValue {
  const group = funcs.find(name);
  const result: CelResult | undefined = group?.call(0, target, args);
  if (result === undefined) throw noOverload(name, target, args);
  if (isCelError(result)) throw result;
  charge(meter, actualCost(name, target === undefined ? args : [target, ...args], result));
  return result;
}

const DYN = CelScalar.DYN;

/** The metered twins of the functions above, for calls with up to three arguments, calling the functions `funcs` resolves. */
export function meteringFunctions(funcs: FuncResolver, meter: Meter): CelFunc[] {
  const out: CelFunc[] = [];
  for (const name of meteredFunctions) {
    for (let arity = 0; arity <= 3; arity += 1) {
      const params = Array.from({ length: arity }, () => DYN);
      out.push(celFunc(meteredName(name), params, DYN, (...args: CelValue[]) => delegate(funcs, meter, name, undefined, args)));
      out.push(celMethod(meteredName(name), DYN, params, DYN, function metered(this: CelValue, ...args: CelValue[]) {
        return delegate(funcs, meter, name, this, args);
      }));
    }
  }
  out.push(celFunc('rxkube.charge', [DYN, CelScalar.DOUBLE], DYN, (value: CelValue, n: number) => {
    charge(meter, n);
    return value;
  }));
  // A loop condition: its own cost, and its step's when it lets the step run (cel-go's fold runs the step only then).
  out.push(celFunc('rxkube.chargeLoop', [DYN, CelScalar.DOUBLE, CelScalar.DOUBLE], DYN, (value: CelValue, condition: number, step: number) => {
    charge(meter, condition + (value === true ? step : 0));
    return value;
  }));
  return out;
}
