import { callCost, type Operand, type Sizes } from './costFunctions.js';
import { boolType, dynType, listOf, mapOf, optionalOf, stringType, typeType, type CelType } from './costModel.js';
import { add, exactly, multiply, one, sum, union, unknownSize, zero, type Range } from './costRange.js';
import { constantType, isScalar, memberType, resultType } from './costTypes.js';
import { optionalChain, optionalIndex, optionalSelect } from './optionalSyntax.js';
import type { Expr } from './staticCheck.js';

/**
 * The worst-case cost of a rule, estimated before it ever runs, as
 * kube-apiserver 1.32 estimates it when a CRD is written (cel-go's
 * `checker.Cost` with Kubernetes's size estimator): a walk over the parsed
 * rule in which reading a variable or a field costs 1, a constant nothing,
 * building a list 10 and a map 30, a call what costFunctions.ts says, and a
 * comprehension (`all`, `exists`, `map`, …) its loop's cost times the most
 * items its range can hold. How many items that is comes from the schema:
 * each value keeps the path it was read from in `self`
 * (`self.spec.ports.@items.name`), and the path's declared size
 * (costModel.ts) is the bound. Like cel-go, a value whose path does not
 * start at `self` (a loop variable over a literal list, a field of a
 * function's result) is sized as `self` itself, and an accumulator by its
 * type alone.
 */

const namespaces = new Set(['sets', 'strings', 'optional', 'math', 'base64', 'ip', 'format']);
const typeNames = new Set(['int', 'uint', 'double', 'string', 'bool', 'bytes', 'list', 'map', 'null_type', 'type', 'dyn']);

interface Binding {
  type: CelType;
  path: readonly string[] | undefined;
}

export interface EstimateContext {
  /** What `self` is (kube's declared type for the rule's level). */
  self: CelType;
  /** Whether `oldSelf` is an optional (`optionalOldSelf: true`). */
  optionalOldSelf: boolean;
}

/** The declared size at a path of `self` (kube's sizeEstimator): the path's first step is the variable, the rest walk the type. */
function declaredSize(self: CelType, path: readonly string[] | undefined): Range | undefined {
  if (path === undefined || path.length === 0) return undefined;
  let at: CelType | undefined = self;
  for (const step of path.slice(1)) {
    if (at === undefined) return undefined;
    if (step === '@items' || step === '@values') at = at.kind === 'list' || at.kind === 'map' ? at.elem : undefined;
    else if (step === '@keys') at = at.kind === 'map' ? stringType : undefined;
    else at = at.kind === 'struct' ? at.fields?.get(step) : undefined;
  }
  return at === undefined ? undefined : { min: 0, max: at.maxElements };
}

function sizesFor(self: CelType): Sizes {
  const kube = (o: Operand): Range => o.size ?? declaredSize(self, o.path) ?? unknownSize;
  return {
    kube,
    cel: (o) => o.size ?? declaredSize(self, o.path) ?? (isScalar(o.type) ? one : unknownSize),
    element: (list) => declaredSize(self, list.path === undefined ? undefined : [...list.path, '@items']) ?? unknownSize,
  };
}

function literalSize(e: Expr): Range | undefined {
  if (e.exprKind.case !== 'constExpr') return undefined;
  const c = e.exprKind.value.constantKind;
  if (c.case === 'stringValue') return exactly([...c.value].length);
  if (c.case === 'bytesValue') return exactly(c.value.length);
  return c.case === undefined ? undefined : one;
}

type CallValue = Extract<Expr['exprKind'], { case: 'callExpr' }>['value'];

/** The field an optional selection names (its second argument, a string constant). */
function field(call: CallValue): string | undefined {
  const key = call.args[1]?.exprKind;
  return key?.case === 'constExpr' && key.value.constantKind.case === 'stringValue' ? key.value.constantKind.value : undefined;
}

/** The estimated cost range of a parsed rule. */
export function estimateCost(expr: Expr, ctx: EstimateContext): Range {
  const sizes = sizesFor(ctx.self);

  const visit = (e: Expr | undefined, scope: ReadonlyMap<string, Binding>): Operand => {
    if (e === undefined) return { cost: zero, type: dynType, path: undefined, size: undefined };
    const kind = e.exprKind;
    switch (kind.case) {
      case 'constExpr': {
        const c = kind.value.constantKind;
        return { cost: zero, type: constantType(c.case), path: undefined, size: literalSize(e), ...(c.case === 'int64Value' ? { literal: c.value } : {}) };
      }
      case 'identExpr': {
        const name = kind.value.name;
        const bound = scope.get(name);
        if (bound !== undefined) return { cost: one, type: bound.type, path: bound.path, size: undefined };
        const type = name === 'self' ? ctx.self : name === 'oldSelf' ? (ctx.optionalOldSelf ? optionalOf(ctx.self) : ctx.self) : typeNames.has(name) ? typeType : dynType;
        return { cost: one, type, path: [name], size: undefined };
      }
      case 'selectExpr': {
        const operand = visit(kind.value.operand, scope);
        if (kind.value.testOnly) return { cost: add(one, operand.cost), type: boolType, path: undefined, size: undefined };
        const charged = operand.type.kind === 'struct' || operand.type.kind === 'map';
        return {
          cost: charged ? add(operand.cost, one) : operand.cost,
          type: memberType(operand.type, kind.value.field),
          // Like cel-go, a field of a value with no path gets a path of its own (`['mode']`), which sizes it as `self`.
          path: [...(operand.path ?? []), kind.value.field],
          size: undefined,
        };
      }
      case 'callExpr':
        return visitCall(kind.value, scope);
      case 'listExpr': {
        const elements = kind.value.elements.map((x) => visit(x, scope));
        return { cost: add(exactly(10), sum(elements.map((x) => x.cost))), type: listOf(elements[0]?.type ?? dynType), path: undefined, size: exactly(elements.length) };
      }
      case 'structExpr': {
        let total = exactly(kind.value.messageName === '' ? 30 : 40);
        for (const entry of kind.value.entries) {
          if (entry.keyKind.case === 'mapKey') total = add(total, visit(entry.keyKind.value, scope).cost);
          total = add(total, visit(entry.value, scope).cost);
        }
        return { cost: total, type: mapOf(dynType), path: undefined, size: exactly(kind.value.entries.length) };
      }
      case 'comprehensionExpr':
        return visitComprehension(kind.value, scope);
      default:
        return { cost: zero, type: dynType, path: undefined, size: undefined };
    }
  };

  type Call = CallValue;
  type Comprehension = Extract<Expr['exprKind'], { case: 'comprehensionExpr' }>['value'];

  const visitCall = (call: Call, scope: ReadonlyMap<string, Binding>): Operand => {
    const t = call.target;
    const namespaced = t?.exprKind.case === 'identExpr' && namespaces.has(t.exprKind.value.name) && !scope.has(t.exprKind.value.name);
    const name = namespaced && t?.exprKind.case === 'identExpr' ? `${t.exprKind.value.name}.${call.function}` : call.function;
    const args = call.args.map((a) => visit(a, scope));
    const target = t !== undefined && !namespaced ? visit(t, scope) : undefined;
    const [a0, a1, a2] = args;
    switch (name) {
      case '_&&_':
      case '_||_': {
        const lhs = a0?.cost ?? zero;
        return { cost: { min: lhs.min, max: add(lhs, a1?.cost ?? zero).max }, type: boolType, path: undefined, size: undefined };
      }
      case '_?_:_': {
        const branches = union(a1?.cost ?? zero, a2?.cost ?? zero);
        const size = a1 !== undefined && a2 !== undefined ? union(sizes.cel(a1), sizes.cel(a2)) : undefined;
        const type = a1?.type.kind === 'dyn' ? (a2?.type ?? dynType) : (a1?.type ?? dynType);
        return { cost: add(a0?.cost ?? zero, branches), type, path: undefined, size };
      }
      case '_[_]': {
        const container = a0?.type ?? dynType;
        const step = container.kind === 'list' ? '@items' : container.kind === 'map' ? '@values' : undefined;
        const path = step === undefined ? undefined : [...(a0?.path ?? []), step];
        return { cost: add(one, sum(args.map((a) => a.cost))), type: memberType(container, undefined), path, size: undefined };
      }
      case optionalChain:
        if (field(call) !== undefined) {
          // `a.?b.c`: cel-go selects `c` of an optional as a field (no cost of its own, a path like any selection).
          const container = a0?.type.kind === 'optional' ? (a0.type.elem ?? dynType) : (a0?.type ?? dynType);
          return { cost: a0?.cost ?? zero, type: optionalOf(memberType(container, field(call))), path: [...(a0?.path ?? []), field(call) as string], size: undefined };
        }
        return { cost: add(one, sum(args.map((a) => a.cost))), type: optionalOf(memberType(a0?.type ?? dynType, undefined)), path: undefined, size: undefined };
      case optionalSelect:
      case optionalIndex: {
        const container = a0?.type.kind === 'optional' ? (a0.type.elem ?? dynType) : (a0?.type ?? dynType);
        return { cost: add(one, sum(args.map((a) => a.cost))), type: optionalOf(memberType(container, field(call))), path: undefined, size: undefined };
      }
      default: {
        const estimate = callCost(name, target, args, sizes);
        const type = resultType(name, target?.type, args.map((a) => a.type));
        return { cost: target === undefined ? estimate.cost : add(target.cost, estimate.cost), type, path: undefined, size: estimate.size };
      }
    }
  };

  const visitComprehension = (c: Comprehension, scope: ReadonlyMap<string, Binding>): Operand => {
    const range = visit(c.iterRange, scope);
    const init = visit(c.accuInit, scope);
    const element: CelType = range.type.kind === 'list' ? (range.type.elem ?? dynType) : range.type.kind === 'map' ? stringType : dynType;
    const step = range.type.kind === 'list' ? '@items' : range.type.kind === 'map' ? '@keys' : undefined;
    const iterPath = step === undefined ? undefined : [...(range.path ?? []), step];
    // cel-go gives an accumulator no path (its size is never the schema's).
    const accumulator: Binding = { type: init.type.kind === 'list' ? listOf(element) : init.type, path: undefined };
    const loopScope = new Map(scope);
    loopScope.set(c.accuVar, accumulator);
    loopScope.set(c.iterVar, { type: element, path: iterPath });
    if (c.iterVar2 !== '') loopScope.set(c.iterVar2, { type: dynType, path: [c.iterVar2] });
    const condition = visit(c.loopCondition, loopScope);
    const loopStep = visit(c.loopStep, loopScope);
    const resultScope = new Map(scope);
    resultScope.set(c.accuVar, loopStep.type.kind === 'list' ? { type: loopStep.type, path: undefined } : accumulator);
    const result = visit(c.result, resultScope);
    const count = sizes.cel(range);
    const total = sum([range.cost, init.cost, result.cost, multiply(count, add(loopStep.cost, condition.cost))]);
    return { cost: total, type: result.type, path: undefined, size: count };
  };

  return visit(expr, new Map()).cost;
}
