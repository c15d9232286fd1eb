import { celEnv, plan, type CelEnv, type CelInput, type CelResult } from '@bufbuild/cel';
import { isPlainObject } from '../../../util/json.js';
import type { FieldError } from '../../api/statusError.js';
import { goQuote } from '../goText.js';
import type { SchemaNode } from '../schemaNode.js';
import { estimateCost } from './costEstimate.js';
import { CostTotal, expressionCostError } from './costLimits.js';
import { cardinalityFactor, declOf, saturatingMultiply, scalarAtPath, unboundedCardinality, type CelType } from './costModel.js';
import { instrument, type ScalarAt } from './costMeter.js';
import { kubeFunctions, macroNames } from './library.js';
import { meteringFunctions, newMeter, type Meter } from './runtimeCost.js';
import { parseWithOptionals, type Parsed } from './optionalSyntax.js';
import { certainlyNotBool, certainlyNotString, staticCheck, usesVariable, type CheckIssue, type Expr } from './staticCheck.js';

/**
 * The `x-kubernetes-validations` of a CRD version compiled once, when the
 * CRD is written: each rule checked as kube's CRD validation checks it
 * (the rule, message, messageExpression, reason, fieldPath and
 * optionalOldSelf fields, then the expressions), parsed and planned, so
 * that a request only evaluates. A CRD whose rules do not compile, or whose
 * estimated cost is over kube's limits (costLimits.ts), is rejected with
 * the errors kube words.
 */

export type Program = (bindings: Record<string, CelInput>) => CelResult;

/** A planned expression and the constant cost of its part that always runs (the rest charges the meter as it runs). */
export interface Metered {
  run: Program;
  fixedCost: number;
}

export interface RuleSource {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

export interface CompiledRule {
  source: RuleSource;
  program: Metered;
  messageProgram: Metered | undefined;
  usesOldSelf: boolean;
  /** The rule's fieldPath as a field path below the level it is declared on (`spec.replicas` style). */
  fieldPath: string | undefined;
  /** kube's estimate of the rule's worst cost, times how many times it may run (what the 10,000,000 limit applies to). */
  estimatedCost: number;
}

export interface CompiledRules {
  byNode: ReadonlyMap<SchemaNode, readonly CompiledRule[]>;
  errors: FieldError[];
  /** What the evaluation in progress has cost so far: the programs charge it as they run. */
  meter: Meter;
}

const supportedReasons = ['FieldValueDuplicate', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueRequired'];

/** The rule as kube prints an `apiextensions.ValidationRule` in an error (Go's `%#v`; pointers that are set show a placeholder address). */
function ruleShown(rule: RuleSource): string {
  const pointer = (type: string, set: boolean): string => `(*${type})(${set ? '0xc000000000' : 'nil'})`;
  return (
    `apiextensions.ValidationRule{Rule:${goQuote(rule.rule)}, Message:${goQuote(rule.message ?? '')}, ` +
    `MessageExpression:${goQuote(rule.messageExpression ?? '')}, Reason:${pointer('apiextensions.FieldValueErrorReason', rule.reason !== undefined)}, ` +
    `FieldPath:${goQuote(rule.fieldPath ?? '')}, OptionalOldSelf:${pointer('bool', rule.optionalOldSelf !== undefined)}}`
  );
}

/** cel-go's wording of a compile error: the location, the message, and the source line with a caret under the place. */
function issueText(source: string, offset: number, message: string): string {
  const before = source.slice(0, offset);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const column = offset - lineStart;
  const text = source.split('\n')[line - 1] ?? '';
  return `ERROR: <input>:${line}:${column + 1}: ${message}\n | ${text}\n | ${'.'.repeat(column)}^`;
}

function parseError(source: string, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const located = /^<input>:(\d+):(\d+): (.*)$/s.exec(message);
  if (located === null) return `ERROR: <input>:1:1: Syntax error: ${message}`;
  const lines = source.split('\n');
  const lineNo = Number(located[1]);
  const offset = lines.slice(0, lineNo - 1).reduce((n, l) => n + l.length + 1, 0) + Number(located[2]) - 1;
  return issueText(source, offset, `Syntax error: ${located[3]}`);
}

interface Compiled {
  program?: Metered;
  expr?: Expr;
  error?: string;
}

function compileExpression(env: CelEnv, source: string, check: (expr: Expr, positions: Record<string, number>) => CheckIssue[], scalarAt: ScalarAt): Compiled {
  let parsed: Parsed;
  try {
    parsed = parseWithOptionals(source);
  } catch (error) {
    return { error: parseError(source, error) };
  }
  const positions: Record<string, number> = {};
  for (const [id, offset] of Object.entries(parsed.sourceInfo?.positions ?? {})) positions[id] = offset;
  const issues = check(parsed.expr, positions);
  if (issues.length > 0) return { error: issues.map((i) => issueText(source, i.offset, i.message)).join('\n') };
  try {
    const instrumented = instrument(parsed.expr, scalarAt);
    return { program: { run: plan(env, instrumented.expr) as Program, fixedCost: instrumented.fixed }, expr: parsed.expr };
  } catch (error) {
    return { error: `ERROR: <input>:1:1: ${error instanceof Error ? error.message : String(error)}` };
  }
}

function stringField(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function ruleSource(raw: Record<string, unknown>): RuleSource {
  return {
    rule: stringField(raw.rule) ?? '',
    ...(stringField(raw.message) !== undefined ? { message: raw.message as string } : {}),
    ...(stringField(raw.messageExpression) !== undefined ? { messageExpression: raw.messageExpression as string } : {}),
    ...(stringField(raw.reason) !== undefined ? { reason: raw.reason as string } : {}),
    ...(stringField(raw.fieldPath) !== undefined ? { fieldPath: raw.fieldPath as string } : {}),
    ...(typeof raw.optionalOldSelf === 'boolean' ? { optionalOldSelf: raw.optionalOldSelf } : {}),
  };
}

/**
 * A rule's `fieldPath` (`.spec.replicas`, `['a.b']`) as the field path it names below its level,
 * or undefined when it names no field of the schema.
 */
export function normalizeFieldPath(path: string, node: SchemaNode): string | undefined {
  const segment = /^(?:\.([A-Za-z_$][A-Za-z0-9_$-]*)|\['((?:[^'\\]|\\.)*)'\])/;
  let rest = path;
  let at: SchemaNode | undefined = node;
  let out = '';
  while (rest !== '') {
    const m = segment.exec(rest);
    if (m === null || at === undefined) return undefined;
    const name = m[1] ?? (m[2] as string).replace(/\\(.)/g, '$1');
    const next: SchemaNode | undefined = at.properties?.get(name) ?? at.additional;
    if (next === undefined) return undefined;
    out += m[1] !== undefined ? (out === '' ? name : `.${name}`) : `[${name}]`;
    at = next;
    rest = rest.slice(m[0].length);
  }
  return out === '' ? undefined : out;
}

export function compileRules(root: SchemaNode, schemaPath: string): CompiledRules {
  const meter = newMeter();
  const base = celEnv({ funcs: [...kubeFunctions] });
  const env = celEnv({ funcs: [...kubeFunctions, ...meteringFunctions(base.funcs, meter)] });
  const functions = new Set<string>(macroNames);
  for (const f of base.funcs) functions.add(f.name);
  const byNode = new Map<SchemaNode, CompiledRule[]>();
  const errors: FieldError[] = [];

  const total = new CostTotal();
  /** The rule's estimate times how many times it may run: `cardinality` when the levels above bound it, else as many as fit in a request. */
  const costOf = (expr: Expr, self: CelType | undefined, optionalOldSelf: boolean, cardinality: number | undefined): number => {
    if (self === undefined) return 0;
    return saturatingMultiply(estimateCost(expr, { self, optionalOldSelf }).max, cardinality ?? unboundedCardinality(self));
  };

  const compileNode = (node: SchemaNode, path: string, isRoot: boolean, uncorrelatable: string | undefined, cardinality: number | undefined): void => {
    const rules = node.raw['x-kubernetes-validations'];
    if (Array.isArray(rules)) {
      const self = declOf(node, isRoot || node.embedded);
      const scalarAt = scalarAtPath(self);
      const compiled: CompiledRule[] = [];
      rules.forEach((raw, i) => {
        const rule = isPlainObject(raw) ? ruleSource(raw) : { rule: '' };
        const at = `${path}.x-kubernetes-validations[${i}]`;
        const before = errors.length;
        if (rule.rule.trim() === '') errors.push({ field: `${at}.rule`, type: 'Required value', detail: 'rule is not specified' });
        if (rule.message !== undefined && rule.message.trim() === '') errors.push({ field: `${at}.message`, type: 'Invalid value', shown: goQuote(rule.message), detail: 'message must be non-empty if specified' });
        else if (rule.message !== undefined && rule.message.includes('\n')) errors.push({ field: `${at}.message`, type: 'Invalid value', shown: goQuote(rule.message), detail: 'message must not contain line breaks' });
        if (rule.rule.includes('\n') && (rule.message ?? '') === '') errors.push({ field: `${at}.message`, type: 'Required value', detail: 'message must be specified if rule contains line breaks' });
        if (rule.messageExpression !== undefined && rule.messageExpression.trim() === '') errors.push({ field: `${at}.messageExpression`, type: 'Required value', detail: 'messageExpression must be non-empty if specified' });
        if (rule.reason !== undefined && !supportedReasons.includes(rule.reason)) {
          errors.push({ field: `${at}.reason`, type: 'Unsupported value', shown: goQuote(rule.reason), detail: `supported values: ${supportedReasons.map(goQuote).join(', ')}` });
        }
        let fieldPath: string | undefined;
        if (rule.fieldPath !== undefined) {
          if (rule.fieldPath.trim() === '') errors.push({ field: `${at}.fieldPath`, type: 'Invalid value', shown: goQuote(rule.fieldPath), detail: 'fieldPath must be non-empty if specified' });
          else if (rule.fieldPath.includes('\n')) errors.push({ field: `${at}.fieldPath`, type: 'Invalid value', shown: goQuote(rule.fieldPath), detail: 'fieldPath must not contain line breaks' });
          else {
            fieldPath = normalizeFieldPath(rule.fieldPath, node);
            if (fieldPath === undefined) errors.push({ field: `${at}.fieldPath`, type: 'Invalid value', shown: goQuote(rule.fieldPath), detail: 'fieldPath must be a valid path' });
          }
        }
        if (errors.length > before) return;
        const check = (expr: Expr, positions: Record<string, number>): CheckIssue[] =>
          staticCheck(expr, { functions, positions, self: node, oldSelf: rule.optionalOldSelf === true ? 'dyn' : node, root: isRoot });
        const main = compileExpression(env, rule.rule, check, scalarAt);
        if (main.error !== undefined || main.expr === undefined || main.program === undefined) {
          errors.push({ field: `${at}.rule`, type: 'Invalid value', shown: ruleShown(rule), detail: `compilation failed: ${main.error ?? ''}` });
          return;
        }
        if (certainlyNotBool(main.expr)) {
          errors.push({ field: `${at}.rule`, type: 'Invalid value', shown: ruleShown(rule), detail: 'cel expression must evaluate to a bool' });
          return;
        }
        const optionalOldSelf = rule.optionalOldSelf === true;
        const estimatedCost = costOf(main.expr, self, optionalOldSelf, cardinality);
        const ruleCostError = expressionCostError(`${at}.rule`, 'estimated rule cost', estimatedCost);
        if (ruleCostError !== undefined) errors.push(ruleCostError);
        total.observe(`${at}.rule`, estimatedCost);
        let messageProgram: Metered | undefined;
        if (rule.messageExpression !== undefined) {
          const message = compileExpression(env, rule.messageExpression, check, scalarAt);
          if (message.error !== undefined || message.program === undefined || message.expr === undefined) {
            errors.push({ field: `${at}.messageExpression`, type: 'Invalid value', shown: ruleShown(rule), detail: `messageExpression compilation failed: ${message.error ?? ''}` });
            return;
          }
          if (certainlyNotString(message.expr)) {
            errors.push({ field: `${at}.messageExpression`, type: 'Invalid value', shown: ruleShown(rule), detail: 'messageExpression must evaluate to a string' });
            return;
          }
          // kube does not multiply a messageExpression's estimate by the cardinality: it runs only when the rule fails.
          const messageCost = costOf(message.expr, self, optionalOldSelf, 1);
          const messageCostError = expressionCostError(`${at}.messageExpression`, 'estimated messageExpression cost', messageCost);
          if (messageCostError !== undefined) errors.push(messageCostError);
          total.observe(`${at}.messageExpression`, messageCost);
          messageProgram = message.program;
        }
        const usesOldSelf = usesVariable(main.expr, 'oldSelf');
        if (usesOldSelf && uncorrelatable !== undefined) {
          errors.push({ field: `${at}.rule`, type: 'Invalid value', shown: goQuote(rule.rule), detail: `oldSelf cannot be used on the uncorrelatable portion of the schema within ${uncorrelatable}` });
          return;
        }
        if (!usesOldSelf && rule.optionalOldSelf !== undefined) {
          errors.push({ field: `${at}.optionalOldSelf`, type: 'Invalid value', shown: String(rule.optionalOldSelf), detail: 'may not be set if oldSelf is not used in rule' });
          return;
        }
        compiled.push({ source: rule, program: main.program, messageProgram, usesOldSelf, fieldPath, estimatedCost });
      });
      if (compiled.length > 0) byNode.set(node, compiled);
    }
    if (!node.hasRules) return;
    const factor = cardinalityFactor(node);
    const below = cardinality === undefined || factor === undefined ? undefined : saturatingMultiply(cardinality, factor);
    for (const [name, child] of node.properties ?? []) compileNode(child, `${path}.properties[${name}]`, false, uncorrelatable, below);
    if (node.additional !== undefined) compileNode(node.additional, `${path}.additionalProperties`, false, uncorrelatable, below);
    if (node.items !== undefined) {
      const itemsPath = `${path}.items`;
      compileNode(node.items, itemsPath, false, uncorrelatable ?? (node.listType === 'map' ? undefined : itemsPath), below);
    }
  };

  compileNode(root, schemaPath, true, undefined, 1);
  errors.push(...total.errors(schemaPath));
  return { byNode, errors, meter };
}
