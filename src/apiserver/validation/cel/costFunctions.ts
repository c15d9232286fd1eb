import type { CelType } from './costModel.js';
import { add, multiply, one, regexLengthFactor, scale, stringTraversalFactor, sum, union, zero, type Range } from './costRange.js';

/**
 * What a call costs by kube-apiserver 1.32's estimate, looked up as cel-go
 * looks it up: first the overload estimators of the libraries that bring
 * their own (the sets library), then Kubernetes's table by function name
 * (k8s.io/apiserver/pkg/cel/library/cost.go), then cel-go's table of the
 * standard functions whose cost grows with their input (string traversal,
 * regex matching, list membership, comparison of strings); every other
 * function costs 1. The arguments' own costs are added in each case. Where
 * an argument's type is dynamic, every overload it could select counts and
 * the range covers them all, as cel-go's checker does.
 */

export interface Operand {
  readonly cost: Range;
  readonly type: CelType;
  /** Where in `self` the value comes from (`['self', 'spec', 'items', '@items']`), for its declared size. */
  readonly path: readonly string[] | undefined;
  /** A size known from the expression itself (a literal, a call's result). */
  readonly size: Range | undefined;
  /** The value of an integer literal (split's limit). */
  readonly literal?: bigint;
}

export interface Sizes {
  /** cel-go's size of a value: computed, declared, 1 for a scalar, else unknown. */
  cel(o: Operand): Range;
  /** The Kubernetes library's: computed, declared, else unknown. */
  kube(o: Operand): Range;
  /** The declared size of a list's items (`listElementNode`). */
  element(list: Operand): Range;
}

export interface CallEstimate {
  cost: Range;
  size?: Range;
}

const isKind = (o: Operand | undefined, ...kinds: string[]): boolean => o !== undefined && kinds.includes(o.type.kind);
const couldBe = (o: Operand | undefined, ...kinds: string[]): boolean => o !== undefined && (o.type.kind === 'dyn' || kinds.includes(o.type.kind));

const nominal = new Set([
  'masked', 'prefixLength', 'family', 'isUnspecified', 'isLoopback', 'isLinkLocalMulticast', 'isLinkLocalUnicast', 'isGlobalUnicast',
  'sign', 'asInteger', 'isInteger', 'asApproximateFloat', 'isGreaterThan', 'isLessThan', 'compareTo', 'add', 'sub', 'major', 'minor', 'patch',
  'getScheme', 'getHostname', 'getHost', 'getPort', 'getEscapedPath', 'getQuery', 'format.named',
]);

/** Kubernetes's table (cost.go's EstimateCallCost), or undefined where it has nothing to say. */
function kubeEstimate(name: string, target: Operand | undefined, args: readonly Operand[], sizes: Sizes): CallEstimate | undefined {
  if (nominal.has(name)) return { cost: one };
  const [a0, a1] = args;
  switch (name) {
    case 'isSorted':
    case 'sum':
    case 'max':
    case 'min':
    case 'indexOf':
    case 'lastIndexOf': {
      if (target === undefined) return undefined;
      if (target.type.kind === 'list' || target.type.kind === 'map') {
        const elementKind = target.type.kind === 'map' ? 'string' : (target.type.elem?.kind ?? 'dyn');
        const perElement = elementKind === 'string' || elementKind === 'bytes' ? add(one, scale(sizes.element(target), stringTraversalFactor)) : one;
        return { cost: multiply(sizes.kube(target), perElement) };
      }
      return { cost: scale(sizes.kube(target), stringTraversalFactor) };
    }
    case 'url': {
      if (args.length !== 1 || a0 === undefined) return undefined;
      const size = sizes.kube(a0);
      return { cost: scale(size, stringTraversalFactor), size };
    }
    case 'lowerAscii':
    case 'upperAscii':
    case 'substring':
    case 'trim': {
      if (target === undefined) return undefined;
      const size = sizes.kube(target);
      return { cost: scale(size, stringTraversalFactor), size };
    }
    case 'replace':
      return target === undefined || a0 === undefined || a1 === undefined ? undefined : replaceEstimate(sizes.kube(target), sizes.kube(a0), sizes.kube(a1));
    case 'split': {
      if (target === undefined) return undefined;
      const size = sizes.kube(target);
      const limit = a1?.literal;
      return { cost: scale(size, 2 * stringTraversalFactor), size: { min: 0, max: limit === undefined ? size.max : Number(BigInt.asUintN(64, limit)) } };
    }
    case 'join': {
      if (target === undefined) return undefined;
      const listSize = sizes.kube(target);
      let size = target.type.kind === 'list' || target.type.kind === 'map' ? multiply(listSize, sizes.element(target)) : zero;
      if (a0 !== undefined) size = add(size, multiply(sizes.kube(a0), { min: Math.max(0, listSize.min - 1), max: Math.max(0, listSize.max - 1) }));
      return { cost: scale(size, stringTraversalFactor), size };
    }
    case 'find':
    case 'findAll': {
      if (target === undefined || a0 === undefined) return undefined;
      const size = sizes.kube(target);
      return { cost: multiply(scale(add(size, one), stringTraversalFactor), scale(sizes.kube(a0), regexLengthFactor)), size: { min: 0, max: size.max } };
    }
    case 'ip':
      // ip(string) is a global function: the table's branches all want a receiver, so only a CIDR's ip() is priced here.
      return target !== undefined && a0 === undefined ? { cost: one } : undefined;
    case 'containsIP':
    case 'containsCIDR': {
      if (target === undefined || a0 === undefined) return undefined;
      const address = { min: 4, max: 16 };
      let cost = scale(add(address, address), stringTraversalFactor);
      if (name === 'containsCIDR') cost = add(add(cost, scale(address, stringTraversalFactor)), one);
      // The overload that takes a string parses it first.
      const parsed = add(cost, scale(sizes.kube(a0), stringTraversalFactor));
      if (isKind(a0, 'string')) return { cost: parsed };
      return { cost: couldBe(a0, 'string') ? union(cost, parsed) : cost };
    }
    case 'validate':
      // A format's regex is not known here; kube prices it as one of 128 characters.
      return target === undefined || a0 === undefined ? undefined : { cost: scale(scale(sizes.kube(a0), stringTraversalFactor), 128 * regexLengthFactor) };
    case '_==_':
      return a0 !== undefined && a1 !== undefined && a0.type.kind === 'opaque' && a1.type.kind === 'opaque' && a0.type.name === a1.type.name ? { cost: opaqueEquality(a0, a1) } : undefined;
    default:
      return undefined;
  }
}

function opaqueEquality(lhs: Operand, rhs: Operand): Range {
  if (lhs.type.name === 'format') return scale({ min: 1, max: 64 }, stringTraversalFactor);
  if (lhs.type.name === 'url') return scale({ min: 1, max: rhs.size?.max ?? 1 }, stringTraversalFactor);
  return one;
}

function replaceEstimate(size: Range, toReplace: Range, replaceWith: Range): CallEstimate {
  const count = { min: 0, max: 0 };
  const retained = { min: 0, max: 0 };
  if (toReplace.min === 0) {
    count.max = size.max + 1;
    retained.max = size.max;
  } else if (replaceWith.max <= toReplace.min) retained.max = size.max;
  else count.max = Math.ceil(size.max / toReplace.min);
  if (toReplace.max === 0) {
    count.min = size.min + 1;
    retained.min = size.min;
  } else if (toReplace.max <= replaceWith.min) retained.min = size.min;
  else count.min = Math.ceil(size.min / toReplace.max);
  return { cost: scale(size, 2 * stringTraversalFactor), size: add(multiply(count, replaceWith), retained) };
}

/** The sets library's own estimators: the product of the two lists' sizes (twice for equivalence), plus 1. */
function setsEstimate(name: string, args: readonly Operand[], sizes: Sizes): CallEstimate | undefined {
  const factor = name === 'sets.equivalent' ? 2 : name === 'sets.contains' || name === 'sets.intersects' ? 1 : 0;
  const [a, b] = args;
  if (factor === 0 || a === undefined || b === undefined) return undefined;
  return { cost: add(scale(multiply(sizes.kube(a), sizes.kube(b)), factor), one) };
}

/** cel-go's table of the standard overloads that cost more than 1, for the overloads the operands' types allow. */
function standardEstimates(name: string, target: Operand | undefined, args: readonly Operand[], sizes: Sizes): CallEstimate[] {
  const [a0, a1] = args;
  const out: CallEstimate[] = [];
  const plain = (): void => void out.push({ cost: one });
  switch (name) {
    case 'startsWith':
    case 'endsWith':
      if (target !== undefined && a0 !== undefined && args.length === 1) out.push({ cost: scale(sizes.cel(a0), stringTraversalFactor) });
      else plain();
      break;
    case 'matches':
      if (target !== undefined && a0 !== undefined) out.push({ cost: multiply(scale(add(sizes.cel(target), one), stringTraversalFactor), scale(sizes.cel(a0), regexLengthFactor)) });
      else plain();
      break;
    case 'contains':
      if (target !== undefined && a0 !== undefined) out.push({ cost: multiply(scale(sizes.cel(target), stringTraversalFactor), scale(sizes.cel(a0), stringTraversalFactor)) });
      else plain();
      break;
    case 'format':
      if (target !== undefined) out.push({ cost: scale(sizes.cel(target), stringTraversalFactor) });
      else plain();
      break;
    case 'strings.quote':
      if (a0 !== undefined) {
        const s = sizes.cel(a0);
        out.push({ cost: scale(s, stringTraversalFactor), size: { min: s.min + 2, max: s.max * 2 + 2 } });
      } else plain();
      break;
    case 'bytes':
    case 'string': {
      const from = name === 'bytes' ? 'string' : 'bytes';
      if (a0 !== undefined && couldBe(a0, from)) {
        const s = sizes.cel(a0);
        out.push({ cost: scale(s, stringTraversalFactor), size: name === 'bytes' ? { min: s.min, max: s.max * 4 } : { min: Math.floor(s.min / 4), max: s.max } });
      }
      if (a0 === undefined || !isKind(a0, from)) plain();
      break;
    }
    case '@in':
      if (couldBe(a1, 'list') && a1 !== undefined) out.push({ cost: sizes.cel(a1) });
      if (!isKind(a1, 'list')) plain();
      break;
    case '_==_':
    case '_!=_':
      if (a0 !== undefined && a1 !== undefined) out.push({ cost: comparison(sizes.cel(a0), sizes.cel(a1)) });
      break;
    case '_<_':
    case '_<=_':
    case '_>_':
    case '_>=_':
      if (a0 !== undefined && a1 !== undefined && couldBe(a0, 'string', 'bytes')) out.push({ cost: comparison(sizes.cel(a0), sizes.cel(a1)) });
      if (!isKind(a0, 'string', 'bytes')) plain();
      break;
    case '_+_':
      if (a0 !== undefined && a1 !== undefined && couldBe(a0, 'string', 'bytes', 'list')) {
        const l = sizes.cel(a0);
        const r = sizes.cel(a1);
        const size = { min: l.min + r.min, max: l.max + r.max };
        if (couldBe(a0, 'list')) out.push({ cost: one, size });
        if (couldBe(a0, 'string', 'bytes')) out.push({ cost: scale(size, stringTraversalFactor), size });
      }
      if (!isKind(a0, 'string', 'bytes', 'list')) plain();
      break;
    default:
      plain();
  }
  return out;
}

/** Equality and ordering of two values: a tenth of the shorter one's length, at least 1 when it may be non-empty. */
function comparison(lhs: Range, rhs: Range): Range {
  const smallestMax = Math.min(lhs.max, rhs.max);
  return scale({ min: smallestMax > 0 ? 1 : 0, max: smallestMax }, stringTraversalFactor);
}

/** The estimated cost of a call (its receiver excluded) and, where known, the size of its result. */
export function callCost(name: string, target: Operand | undefined, args: readonly Operand[], sizes: Sizes): CallEstimate {
  const argCosts = sum(args.map((a) => a.cost));
  const own = setsEstimate(name, args, sizes) ?? kubeEstimate(name, target, args, sizes);
  if (own !== undefined) return { cost: add(own.cost, argCosts), ...(own.size === undefined ? {} : { size: own.size }) };
  const candidates = standardEstimates(name, target, args, sizes);
  let cost: Range | undefined;
  let size: Range | undefined;
  for (const c of candidates) {
    cost = cost === undefined ? c.cost : union(cost, c.cost);
    if (c.size !== undefined) size = size === undefined ? c.size : union(size, c.size);
  }
  return { cost: add(cost ?? one, argCosts), ...(size === undefined ? {} : { size }) };
}
