import { celError, isCelError, type CelInput, type CelResult } from '@bufbuild/cel';
import { isPlainObject, jsonEqual } from '../../../util/json.js';
import type { FieldError } from '../../api/statusError.js';
import { goQuote } from '../goText.js';
import type { SchemaNode } from '../schemaNode.js';
import type { CompiledRule, CompiledRules, Metered, Program } from './compileRules.js';
import { perCallLimit, runtimeCelCostBudget } from './costModel.js';
import type { Meter } from './runtimeCost.js';
import { optionalValue } from './library.js';
import { toCelValue } from './celValues.js';

/**
 * The CEL pass of a custom resource write, as kube-apiserver 1.32 runs it:
 * every compiled rule on every level that has a value (null values are not
 * validated), `self` bound to that value and `oldSelf` to the value it
 * correlates with in the stored object (by property name, and by key in
 * `x-kubernetes-list-type: map` lists). Transition rules (those that read
 * `oldSelf`) are skipped on create and where no old value correlates,
 * unless `optionalOldSelf` binds `oldSelf` as an optional. On an update, a
 * rule without `oldSelf` that fails on a value the update did not change
 * is a warning, not an error (CRD validation ratcheting).
 *
 * What the rules cost as they run is counted as kube counts it
 * (runtimeCost.ts): one evaluation may cost at most 1,000,000 and all of a
 * request's at most 10,000,000; past either, the rule is refused with
 * kube's words and no further rule runs.
 */

export interface RuleOutcome {
  errors: FieldError[];
  warnings: string[];
}

const maxMessageBytes = 5000;

function ruleText(rule: CompiledRule): string {
  const message = rule.source.message?.trim() ?? '';
  return message !== '' ? message : rule.source.rule.trim();
}

function defaultMessage(rule: CompiledRule): string {
  const message = rule.source.message?.trim() ?? '';
  return message !== '' ? message : `failed rule: ${rule.source.rule.trim()}`;
}

/** cel-go's wording for the runtime errors a rule can meet. */
function runtimeError(error: Error): string {
  const noField = /^field not found: (.*)$/.exec(error.message);
  if (noField !== null) return `no such key: ${noField[1]}`;
  return error.message;
}

/** A program's result; a throw inside the evaluator is an error like any other, never a failed request. */
function run(program: Program, bindings: Record<string, CelInput>): CelResult {
  try {
    return program(bindings);
  } catch (error) {
    return celError(error);
  }
}

/** A program's result and what it cost; `cancelled` when it went over the per-call limit. */
function metered(meter: Meter, program: Metered, bindings: Record<string, CelInput>): { result: CelResult; cost: number; cancelled: boolean } {
  meter.cost = 0;
  const result = run(program.run, bindings);
  meter.cost += program.fixedCost;
  return { result, cost: meter.cost, cancelled: meter.cost > perCallLimit };
}

const outOfBudget = 'validation failed due to running out of cost budget, no further validation rules will be run';

/** The budget a request's rules share, and whether it ran out (then nothing more runs). */
interface Budget {
  remaining: number;
  stopped: boolean;
}

/** The message a messageExpression gives (undefined: fall back to the message), or the error that stops validation. */
function evaluatedMessage(rule: CompiledRule, meter: Meter, bindings: Record<string, CelInput>, budget: Budget): { text?: string; stop?: string } {
  if (rule.messageProgram === undefined) return {};
  const { result, cost, cancelled } = metered(meter, rule.messageProgram, bindings);
  if (cost > budget.remaining) return { stop: 'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run' };
  if (cancelled) return { stop: `no further validation rules will be run due to call cost exceeds limit for messageExpression: ${JSON.stringify(rule.source.messageExpression ?? '')}` };
  budget.remaining -= cost;
  if (isCelError(result) || typeof result !== 'string') return {};
  const trimmed = result.trim();
  if (trimmed === '' || trimmed.includes('\n') || Buffer.byteLength(trimmed) > maxMessageBytes) return {};
  return { text: trimmed };
}

function failure(rule: CompiledRule, field: string, typeName: string, detail: string): FieldError {
  switch (rule.source.reason) {
    case 'FieldValueForbidden':
      return { field, type: 'Forbidden', detail };
    case 'FieldValueRequired':
      return { field, type: 'Required value', detail };
    case 'FieldValueDuplicate':
      return { field, type: 'Duplicate value', shown: goQuote(typeName), detail: '' };
    default:
      return { field, type: 'Invalid value', shown: goQuote(typeName), detail };
  }
}

function errorText(error: FieldError): string {
  const head = error.shown === undefined ? error.type : `${error.type}: ${error.shown}`;
  return `${error.field}: ${error.detail === '' ? head : `${head}: ${error.detail}`}`;
}

function childName(name: string, key: string): string {
  return name === '' ? key : `${name}.${key}`;
}

/** The old item of a map-list that has the same keys as `item`. */
function correlatedItem(node: SchemaNode, old: unknown, item: unknown): unknown {
  if (node.listType !== 'map' || !Array.isArray(old) || !isPlainObject(item)) return undefined;
  return old.find((o) => isPlainObject(o) && node.listMapKeys.every((k) => jsonEqual(o[k], item[k])));
}

export function evaluateRules(compiled: CompiledRules, root: SchemaNode, value: unknown, old: unknown): RuleOutcome {
  const outcome: RuleOutcome = { errors: [], warnings: [] };
  const budget: Budget = { remaining: runtimeCelCostBudget, stopped: false };
  const visit = (node: SchemaNode, v: unknown, o: unknown, name: string, isRoot: boolean): void => {
    if (budget.stopped || !node.hasRules || v === null || v === undefined) return;
    const rules = compiled.byNode.get(node);
    if (rules !== undefined) runRules(rules, node, v, o, name, isRoot);
    if (Array.isArray(v)) {
      const items = node.items;
      if (items === undefined) return;
      v.forEach((item, i) => visit(items, item, correlatedItem(node, o, item), `${name}[${i}]`, false));
      return;
    }
    if (!isPlainObject(v)) return;
    const correlates = node.mapType === undefined || node.mapType === 'granular' || node.mapType === 'atomic';
    const oldObject = correlates && isPlainObject(o) ? o : undefined;
    for (const [key, child] of Object.entries(v)) {
      const schema = node.properties?.get(key) ?? node.additional;
      if (schema !== undefined) visit(schema, child, oldObject?.[key], childName(name, key), false);
    }
  };

  const runRules = (rules: readonly CompiledRule[], node: SchemaNode, v: unknown, o: unknown, name: string, isRoot: boolean): void => {
    const hasOld = o !== undefined && o !== null;
    let self: CelInput | undefined;
    let oldSelf: CelInput | undefined;
    let unchanged: boolean | undefined;
    // kube shows the schema's type as the value ("" for int-or-string and untyped levels).
    const typeName = node.type ?? '';
    const field = name === '' ? '<nil>' : name;
    const stop = (detail: string): void => {
      outcome.errors.push({ field, type: 'Invalid value', shown: goQuote(typeName), detail });
      budget.stopped = true;
    };
    if (budget.remaining <= 0) return stop(outOfBudget);
    for (const rule of rules) {
      const optional = rule.source.optionalOldSelf === true;
      if (rule.usesOldSelf && !hasOld && !optional) continue;
      self ??= toCelValue(v, node, isRoot);
      const bindings: Record<string, CelInput> = { self };
      if (rule.usesOldSelf) {
        if (hasOld) oldSelf ??= toCelValue(o, node, isRoot);
        bindings.oldSelf = (optional ? optionalValue(hasOld ? oldSelf : undefined) : oldSelf) as CelInput;
      }
      const { result, cost, cancelled } = metered(compiled.meter, rule.program, bindings);
      if (cost > budget.remaining) return stop(outOfBudget);
      budget.remaining -= cost;
      if (cancelled) return stop(`'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleText(rule)}`);
      if (isCelError(result)) {
        const message = runtimeError(result);
        const detail = /^found no matching overload/.test(message)
          ? `'no such overload': call arguments did not match a supported operator, function or macro signature for rule: ${ruleText(rule)}`
          : `${message} evaluating rule: ${ruleText(rule)}`;
        outcome.errors.push({ field, type: 'Invalid value', shown: goQuote(typeName), detail });
        continue;
      }
      if (result === true) continue;
      const at = rule.fieldPath === undefined ? field : name === '' || rule.fieldPath.startsWith('[') ? `${name}${rule.fieldPath}` : `${name}.${rule.fieldPath}`;
      const message = evaluatedMessage(rule, compiled.meter, bindings, budget);
      if (message.stop !== undefined) return stop(message.stop);
      const detail = message.text ?? defaultMessage(rule);
      const error = failure(rule, at, typeName, detail);
      unchanged ??= hasOld && jsonEqual(v, o);
      if (unchanged && !rule.usesOldSelf) outcome.warnings.push(errorText(error));
      else outcome.errors.push(error);
    }
  };

  visit(root, value, old, '', true);
  return outcome;
}
