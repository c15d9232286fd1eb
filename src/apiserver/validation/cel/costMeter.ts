import { optionalChain, optionalIndex, optionalSelect } from './optionalSyntax.js';
import { meteredFunctions, meteredName } from './runtimeCost.js';
import type { Expr } from './staticCheck.js';

/**
 * A parsed rule rewritten so that running it counts its cost as cel-go
 * does at runtime: reading a variable or a field costs 1, building a list
 * 10 and a map 30, a call 1 unless its cost depends on its arguments (then
 * its metered twin charges it, runtimeCost.ts), and `&&`, `||`, `?:` and
 * the comprehensions nothing of their own. The constant costs of a stretch
 * of the rule that always runs as a whole are charged once, when it is
 * done (`rxkube.charge(expr, n)`; for the rule's own stretch, by the
 * evaluator after the run); each operand that may be skipped (the
 * right of `&&` and `||`, the branches of `?:`, a loop's condition and
 * step, run once per item) is a stretch of its own, so what is charged is
 * what ran. A loop's condition is charged on every turn, with its step's
 * constant cost when it lets the step run, so a runaway loop stops at the
 * limit. Comparisons and sums of values the schema or the expression says
 * are scalars cost 1, and are not metered.
 */

const namespaces = new Set(['sets', 'strings', 'optional', 'math', 'base64', 'ip', 'format']);
/** Called only as methods for their metered cost (as global functions they cost 1). */
const methodsOnly = new Set(['matches', 'startsWith', 'endsWith', 'contains']);

interface Rewritten {
  e: Expr;
  /** Constant cost not charged yet. */
  pending: number;
  /** Whether the value is certainly a number, bool, timestamp or duration (its size is 1, so comparing it costs 1). */
  scalar: boolean;
  /** Where in `self` (or `oldSelf`) the value was read, for its schema type. */
  path?: readonly string[];
}

/** Operators whose cost depends on their operands only when these are strings, bytes, lists or maps. */
const sizedOperators = new Set(['_==_', '_!=_', '_<_', '_<=_', '_>_', '_>=_', '_+_']);
/** Calls whose result is a scalar whatever their arguments. */
const scalarResults = new Set(['size', 'int', 'uint', 'double', 'bool', 'timestamp', 'duration', '!_', '@in', '_<_', '_<=_', '_>_', '_>=_', '_==_', '_!=_']);
const arithmetic = new Set(['_+_', '_-_', '_*_', '_/_', '_%_', '-_']);

/** Whether the schema says the value at a path of `self` is a scalar; instrument() works without it, metering more. */
export type ScalarAt = (path: readonly string[]) => boolean;

function maxId(e: Expr | undefined): bigint {
  if (e === undefined) return 0n;
  let max = e.id;
  const k = e.exprKind;
  const consider = (x: Expr | undefined): void => {
    const m = maxId(x);
    if (m > max) max = m;
  };
  switch (k.case) {
    case 'selectExpr':
      consider(k.value.operand);
      break;
    case 'callExpr':
      consider(k.value.target);
      k.value.args.forEach(consider);
      break;
    case 'listExpr':
      k.value.elements.forEach(consider);
      break;
    case 'structExpr':
      for (const entry of k.value.entries) {
        if (entry.keyKind.case === 'mapKey') consider(entry.keyKind.value);
        consider(entry.value);
      }
      break;
    case 'comprehensionExpr':
      [k.value.iterRange, k.value.accuInit, k.value.loopCondition, k.value.loopStep, k.value.result].forEach(consider);
      break;
    default:
      break;
  }
  return max;
}

export interface Instrumented {
  expr: Expr;
  /** The constant cost of the stretch that always runs, which the evaluator adds when the rule has run (no call needed). */
  fixed: number;
}

/** The rule with its costs charged to the meter as it runs. */
export function instrument(expr: Expr, scalarAt: ScalarAt = () => false): Instrumented {
  let nextId = maxId(expr) + 1n;
  const node = (exprKind: unknown): Expr => ({ id: (nextId += 1n), exprKind }) as unknown as Expr;
  const withKind = (e: Expr, exprKind: unknown): Expr => ({ ...e, exprKind }) as unknown as Expr;
  // A double, not an int: the evaluator hands a function a double as a number, an int as a bigint to convert.
  const int = (n: number): Expr => node({ case: 'constExpr', value: { constantKind: { case: 'doubleValue', value: n } } });
  const charged = (r: Rewritten): Expr => (r.pending === 0 ? r.e : node({ case: 'callExpr', value: { function: 'rxkube.charge', args: [r.e, int(r.pending)] } }));
  /** A loop's condition, charged on every turn with what it costs, and with what the step costs when the condition lets it run. */
  const loopCondition = (condition: Rewritten, step: Rewritten): Expr =>
    node({ case: 'callExpr', value: { function: 'rxkube.chargeLoop', args: [condition.e, int(condition.pending), int(step.pending)] } });
  const plain = (e: Expr, pending: number, scalar = false, path?: readonly string[]): Rewritten => ({ e, pending, scalar, ...(path === undefined ? {} : { path }) });

  const rewrite = (e: Expr): Rewritten => {
    const k = e.exprKind;
    switch (k.case) {
      case 'constExpr': {
        const c = k.value.constantKind.case;
        return plain(e, 0, c !== 'stringValue' && c !== 'bytesValue' && c !== 'nullValue' && c !== undefined);
      }
      case 'identExpr': {
        const root = k.value.name === 'self' || k.value.name === 'oldSelf' ? ['self'] : undefined;
        return plain(e, 1, root !== undefined && scalarAt(root), root);
      }
      case 'selectExpr': {
        if (k.value.operand === undefined) return plain(e, 1);
        const operand = rewrite(k.value.operand);
        const path = k.value.testOnly || operand.path === undefined ? undefined : [...operand.path, k.value.field];
        return plain(withKind(e, { case: 'selectExpr', value: { ...k.value, operand: operand.e } }), operand.pending + 1, k.value.testOnly || (path !== undefined && scalarAt(path)), path);
      }
      case 'listExpr': {
        const elements = k.value.elements.map(rewrite);
        return plain(withKind(e, { case: 'listExpr', value: { ...k.value, elements: elements.map((x) => x.e) } }), 10 + elements.reduce((n, x) => n + x.pending, 0));
      }
      case 'structExpr': {
        let pending = k.value.messageName === '' ? 30 : 40;
        const entries = k.value.entries.map((entry) => {
          const value = entry.value === undefined ? undefined : rewrite(entry.value);
          const key = entry.keyKind.case === 'mapKey' ? rewrite(entry.keyKind.value) : undefined;
          pending += (value?.pending ?? 0) + (key?.pending ?? 0);
          return { ...entry, value: value?.e, keyKind: key === undefined ? entry.keyKind : { case: 'mapKey', value: key.e } };
        });
        return plain(withKind(e, { case: 'structExpr', value: { ...k.value, entries } }), pending);
      }
      case 'comprehensionExpr': {
        const c = k.value;
        const parts = [c.iterRange, c.accuInit, c.result].map((x) => (x === undefined ? undefined : rewrite(x)));
        const condition = c.loopCondition === undefined ? undefined : rewrite(c.loopCondition);
        const step = c.loopStep === undefined ? undefined : rewrite(c.loopStep);
        const [range, init, result] = parts;
        const value = {
          ...c,
          iterRange: range?.e,
          accuInit: init?.e,
          result: result?.e,
          // The step's constant cost is charged with the condition that lets it run; what it may skip charges itself.
          loopCondition: condition === undefined ? undefined : loopCondition(condition, step ?? plain(e, 0)),
          loopStep: step?.e,
        };
        return plain(withKind(e, { case: 'comprehensionExpr', value }), parts.reduce((n, x) => n + (x?.pending ?? 0), 0), result?.scalar ?? false);
      }
      case 'callExpr':
        return rewriteCall(e, k.value);
      default:
        return plain(e, 0);
    }
  };

  type Call = Extract<Expr['exprKind'], { case: 'callExpr' }>['value'];
  const rewriteCall = (e: Expr, call: Call): Rewritten => {
    const t = call.target;
    const namespaced = t?.exprKind.case === 'identExpr' && namespaces.has(t.exprKind.value.name);
    const name = namespaced && t?.exprKind.case === 'identExpr' ? `${t.exprKind.value.name}.${call.function}` : call.function;
    const args = call.args.map(rewrite);
    const callKind = (fn: string, newArgs: Expr[], target: Expr | undefined): Expr =>
      withKind(e, { case: 'callExpr', value: { ...call, function: fn, args: newArgs, target } });
    switch (name) {
      case '_&&_':
      case '_||_':
        // The left always runs; the right only when the left does not decide.
        return plain(callKind(name, args.map((a, i) => (i === 0 ? a.e : charged(a))), undefined), args[0]?.pending ?? 0, true);
      case '_?_:_':
        return plain(callKind(name, args.map((a, i) => (i === 0 ? a.e : charged(a))), undefined), args[0]?.pending ?? 0, (args[1]?.scalar ?? false) && (args[2]?.scalar ?? false));
      default:
        break;
    }
    const argPending = args.reduce((n, a) => n + a.pending, 0);
    if (namespaced) {
      const metered = meteredFunctions.has(name);
      return plain(callKind(metered ? meteredName(name) : call.function, args.map((a) => a.e), metered ? undefined : t), argPending + (metered ? 0 : 1), scalarResults.has(name));
    }
    const target = t === undefined ? undefined : rewrite(t);
    const pending = argPending + (target?.pending ?? 0);
    const scalar = scalarResults.has(name) || (arithmetic.has(name) && (args[0]?.scalar ?? false));
    const indexing = name === '_[_]' || name === optionalSelect || name === optionalIndex || name === optionalChain;
    // Comparing or adding scalars costs 1 whatever their values: no need to meter.
    const sizeFree = sizedOperators.has(name) && args.every((a) => a.scalar);
    if (!indexing && !sizeFree && meteredFunctions.has(name) && (target !== undefined || !methodsOnly.has(name))) {
      return plain(callKind(meteredName(name), args.map((a) => a.e), target?.e), pending, scalar);
    }
    return plain(callKind(call.function, args.map((a) => a.e), target?.e), pending + 1, scalar);
  };

  const top = rewrite(expr);
  return { expr: top.e, fixed: top.pending };
}
