import type { parse } from '@bufbuild/cel';
import { compileSchemaNode, type SchemaNode } from '../schemaNode.js';
import { optionalChain, optionalSelect } from './optionalSyntax.js';

/**
 * The compile-time checks kube's CEL type checker makes that matter most to
 * a CRD author, on the parsed rule (the evaluator has no type checker of
 * its own): names that are not declared (`undeclared reference to 'x'`),
 * fields that the schema does not declare (`undefined field 'x'`),
 * functions that do not exist, and a rule that cannot be a bool.
 */

/** A parsed expression (the evaluator's AST). */
export type Expr = ReturnType<typeof parse>['expr'];

export interface CheckIssue {
  /** Offset in the source of the expression that is wrong. */
  offset: number;
  message: string;
}

/** What a name or an expression refers to: a schema level, or something untyped. */
type Typed = SchemaNode | 'dyn';

const typeNames = new Set(['int', 'uint', 'double', 'string', 'bool', 'bytes', 'list', 'map', 'null_type', 'type', 'dyn']);
const namespaces = new Set(['sets', 'strings', 'optional', 'math', 'base64', 'ip', 'format']);
/** Calls the evaluator's planner handles itself rather than through a function. */
const builtins = new Set(['_&&_', '_||_', '_?_:_', '_[_]', '@not_strictly_false', '@in', 'has', 'matches', 'size', 'type', 'dyn', 'timestamp', 'duration', 'int', 'uint', 'double', 'string', 'bool', 'bytes']);
const boolResults = new Set(['_==_', '_!=_', '_<_', '_<=_', '_>_', '_>=_', '_&&_', '_||_', '!_', '@in', 'has', 'matches', 'startsWith', 'endsWith', 'contains']);
const nonBoolResults = new Set(['_+_', '_-_', '_*_', '_/_', '_%_', '-_', 'size', 'string', 'int', 'uint', 'double', 'bytes', 'timestamp', 'duration']);

/** The fields a root or embedded object has besides its schema's properties. */
const objectMetaFields = new Set(['apiVersion', 'kind', 'metadata']);
/** What a rule sees of `metadata` at the root, as kube declares it: the name and generateName only. */
const rootMetadata = compileSchemaNode({ type: 'object', properties: { name: { type: 'string' }, generateName: { type: 'string' } } });

export interface CheckContext {
  functions: ReadonlySet<string>;
  positions: Readonly<Record<string, number>>;
  self: SchemaNode;
  /** What oldSelf is: the level itself, or untyped when it is an optional (`optionalOldSelf`). */
  oldSelf: Typed;
  root: boolean;
}

function closed(node: SchemaNode): boolean {
  return node.properties !== undefined && node.additional === undefined && !node.additionalAny && !node.preserveUnknown;
}

function fieldOf(node: Typed, field: string, isRootObject: boolean): Typed | undefined {
  if (node === 'dyn') return 'dyn';
  if (node.type === 'object' || node.properties !== undefined || node.additional !== undefined) {
    const declared = node.celProperties?.get(field);
    if (declared !== undefined) return declared;
    if (isRootObject && field === 'metadata') return rootMetadata;
    if ((isRootObject || node.embedded) && objectMetaFields.has(field)) return 'dyn';
    if (node.additional !== undefined) return node.additional;
    if (closed(node)) return undefined;
  }
  return 'dyn';
}

export function staticCheck(expr: Expr, ctx: CheckContext): CheckIssue[] {
  const issues: CheckIssue[] = [];
  const at = (e: Expr): number => ctx.positions[String(e.id)] ?? 0;

  const visit = (e: Expr | undefined, scope: ReadonlyMap<string, Typed>): Typed => {
    if (e === undefined) return 'dyn';
    const kind = e.exprKind;
    switch (kind.case) {
      case 'constExpr':
      case undefined:
        return 'dyn';
      case 'identExpr': {
        const name = kind.value.name;
        const scoped = scope.get(name);
        if (scoped !== undefined) return scoped;
        if (name === 'self') return ctx.self;
        if (name === 'oldSelf') return ctx.oldSelf;
        if (!typeNames.has(name)) issues.push({ offset: at(e), message: `undeclared reference to '${name}' (in container '')` });
        return 'dyn';
      }
      case 'selectExpr': {
        const operand = kind.value.operand;
        const target = visit(operand, scope);
        const isRootObject = ctx.root && operand?.exprKind.case === 'identExpr' && ['self', 'oldSelf'].includes(operand.exprKind.value.name) && !scope.has(operand.exprKind.value.name);
        const found = fieldOf(target, kind.value.field, isRootObject);
        if (found === undefined) {
          issues.push({ offset: at(e), message: `undefined field '${kind.value.field}'` });
          return 'dyn';
        }
        return found;
      }
      case 'callExpr': {
        const call = kind.value;
        const target = call.target;
        const namespaced = target?.exprKind.case === 'identExpr' && namespaces.has(target.exprKind.value.name) && !scope.has(target.exprKind.value.name);
        const name = namespaced && target?.exprKind.case === 'identExpr' ? `${target.exprKind.value.name}.${call.function}` : call.function;
        if (target !== undefined && !namespaced) visit(target, scope);
        const args = call.args.map((a) => visit(a, scope));
        if (!builtins.has(name) && !ctx.functions.has(name)) issues.push({ offset: at(e), message: `undeclared reference to '${name}' (in container '')` });
        const selected = call.args[1]?.exprKind;
        if ((name === optionalSelect || name === optionalChain) && selected?.case === 'constExpr' && selected.value.constantKind.case === 'stringValue' && args[0] !== undefined) {
          // `a.?b` (and `.c` after it) is checked as `a.b` is, and typed as what it holds, its optional aside.
          const found = fieldOf(args[0], selected.value.constantKind.value, false);
          if (found === undefined) issues.push({ offset: at(e), message: `undefined field '${selected.value.constantKind.value}'` });
          return found ?? 'dyn';
        }
        if (name === '_[_]') {
          const [container, index] = [args[0], call.args[1]];
          if (container === undefined || container === 'dyn') return 'dyn';
          if (container.type === 'array') return container.items ?? 'dyn';
          if (index?.exprKind.case === 'constExpr' && index.exprKind.value.constantKind.case === 'stringValue') {
            return fieldOf(container, index.exprKind.value.constantKind.value, false) ?? 'dyn';
          }
          return container.additional ?? 'dyn';
        }
        return 'dyn';
      }
      case 'listExpr':
        for (const element of kind.value.elements) visit(element, scope);
        return 'dyn';
      case 'structExpr':
        for (const entry of kind.value.entries) {
          if (entry.keyKind.case === 'mapKey') visit(entry.keyKind.value, scope);
          visit(entry.value, scope);
        }
        return 'dyn';
      case 'comprehensionExpr': {
        const c = kind.value;
        const range = visit(c.iterRange, scope);
        const element: Typed = range !== 'dyn' && range.type === 'array' ? (range.items ?? 'dyn') : 'dyn';
        const inner = new Map(scope);
        inner.set(c.iterVar, element);
        if (c.iterVar2 !== '') inner.set(c.iterVar2, 'dyn');
        visit(c.accuInit, scope);
        inner.set(c.accuVar, 'dyn');
        visit(c.loopCondition, inner);
        visit(c.loopStep, inner);
        visit(c.result, inner);
        return 'dyn';
      }
      default:
        return 'dyn';
    }
  };

  visit(expr, new Map());
  return issues;
}

/** Whether the expression certainly is no bool (a literal, arithmetic, a conversion), which kube rejects at compile time. */
export function certainlyNotBool(expr: Expr): boolean {
  const kind = expr.exprKind;
  if (kind.case === 'constExpr') return kind.value.constantKind.case !== 'boolValue';
  if (kind.case === 'listExpr' || kind.case === 'structExpr') return true;
  if (kind.case === 'callExpr') return nonBoolResults.has(kind.value.function) && kind.value.target === undefined;
  return false;
}

/** Whether the expression certainly is no string (a non-string literal, a comparison or logic), which kube rejects for a messageExpression. */
export function certainlyNotString(expr: Expr): boolean {
  const kind = expr.exprKind;
  if (kind.case === 'constExpr') return kind.value.constantKind.case !== 'stringValue';
  if (kind.case === 'listExpr' || kind.case === 'structExpr') return true;
  if (kind.case === 'callExpr') return boolResults.has(kind.value.function);
  return false;
}

/** Whether the expression reads `name` as a free variable (not a comprehension's own). */
export function usesVariable(expr: Expr | undefined, name: string, shadowed = false): boolean {
  if (expr === undefined) return false;
  const kind = expr.exprKind;
  switch (kind.case) {
    case 'identExpr':
      return !shadowed && kind.value.name === name;
    case 'selectExpr':
      return usesVariable(kind.value.operand, name, shadowed);
    case 'callExpr':
      return usesVariable(kind.value.target, name, shadowed) || kind.value.args.some((a) => usesVariable(a, name, shadowed));
    case 'listExpr':
      return kind.value.elements.some((e) => usesVariable(e, name, shadowed));
    case 'structExpr':
      return kind.value.entries.some((e) => (e.keyKind.case === 'mapKey' && usesVariable(e.keyKind.value, name, shadowed)) || usesVariable(e.value, name, shadowed));
    case 'comprehensionExpr': {
      const c = kind.value;
      const inner = shadowed || c.iterVar === name || c.iterVar2 === name || c.accuVar === name;
      return usesVariable(c.iterRange, name, shadowed) || usesVariable(c.accuInit, name, shadowed) || usesVariable(c.loopCondition, name, inner) || usesVariable(c.loopStep, name, inner) || usesVariable(c.result, name, inner);
    }
    default:
      return false;
  }
}
