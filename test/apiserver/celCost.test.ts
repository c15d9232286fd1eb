import { expect } from 'chai';
import { estimateCost } from '../../src/apiserver/validation/cel/costEstimate.js';
import { declOf } from '../../src/apiserver/validation/cel/costModel.js';
import { parseWithOptionals } from '../../src/apiserver/validation/cel/optionalSyntax.js';
import { compileSchema, schemaErrors, validateCustomResource } from '../../src/apiserver/validation/compiledSchema.js';
import { compileSchemaNode } from '../../src/apiserver/validation/schemaNode.js';
import { kubeCostCases, type Schema } from './data/kubeCostEstimationCases.js';

/** kube's estimate of the one rule on `schema` (the level is no resource root, as in kube's own test). */
function estimate(schema: Schema): number {
  const node = compileSchemaNode(schema);
  const rule = (schema['x-kubernetes-validations'] as { rule: string }[])[0]?.rule ?? '';
  const self = declOf(node, false);
  if (self === undefined) throw new Error('no declared type');
  return estimateCost(parseWithOptionals(rule).expr, { self, optionalOldSelf: false }).max;
}

describe('CEL cost estimation (kube-apiserver 1.32)', () => {
  describe("kube's own cases (compilation_test.go TestCostEstimation)", () => {
    for (const c of kubeCostCases) {
      it(c.name, () => {
        const calc = estimate(c.schema(undefined));
        if (c.calc !== undefined) expect(calc, 'without bounds').to.equal(c.calc);
        if (c.calcOver !== undefined) expect(calc, 'without bounds').to.be.greaterThan(c.calcOver);
        if (c.set !== undefined) expect(estimate(c.schema(c.setMaxElements)), `with bounds of ${c.setMaxElements}`).to.equal(c.set);
      });
    }
  });
});

/** A CRD schema whose spec holds a list of short strings (maxLength 8: 32 bytes) with rules on spec. */
function specWithList(maxItems: number | undefined, rules: readonly Record<string, unknown>[]): Schema {
  const items = { type: 'array', items: { type: 'string', maxLength: 8 }, ...(maxItems === undefined ? {} : { maxItems }) };
  return { type: 'object', properties: { spec: { type: 'object', properties: { items }, 'x-kubernetes-validations': rules } } };
}

const schemaPath = 'spec.validation.openAPIV3Schema';
const specRule = `${schemaPath}.properties[spec].x-kubernetes-validations`;
const hint = '(try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)';
/**
 * Every item compared with every other: per inner step 10 (the loop condition `!@result` 3, the step
 * `@result || x == y` 1 + 2 + ceil(min(32, 32) / 10) = 7), per outer step 3 + the inner loop (10n + 3),
 * so 10n² + 6n + 3 for n items.
 */
const pairwise = 'self.items.all(x, self.items.exists(y, x == y))';
const pairwiseCost = (n: number): number => 10 * n * n + 6 * n + 3;
const contributed = 'Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema';

function costErrors(schema: Schema): string[] {
  return schemaErrors(schema, schemaPath)
    .filter((e) => e.type === 'Forbidden')
    .map((e) => `${e.field}: ${e.type}: ${e.detail}`);
}

describe('CEL cost limits on CRD writes', () => {
  it('accepts a quadratic rule over a list bounded by maxItems, within the per-rule limit', () => {
    expect(pairwiseCost(100)).to.equal(100_603);
    expect(costErrors(specWithList(100, [{ rule: pairwise }]))).to.deep.equal([]);
  });

  it('refuses the same rule over an unbounded list, with the factor kube prints above 100 (and the total is over too)', () => {
    expect(costErrors(specWithList(undefined, [{ rule: pairwise }]))).to.deep.equal([
      `${specRule}[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x ${hint}`,
      `${specRule}[0].rule: ${contributed}`,
      `${schemaPath}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${hint}`,
    ]);
  });

  it('prints the factor with six decimals below 1.5 and one above, as Go formats it', () => {
    expect(pairwiseCost(1000)).to.equal(10_006_003);
    expect(costErrors(specWithList(1000, [{ rule: pairwise }]))).to.deep.equal([`${specRule}[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 1.000600x ${hint}`]);
    expect(pairwiseCost(1300)).to.equal(16_907_803);
    expect(costErrors(specWithList(1300, [{ rule: pairwise }]))).to.deep.equal([`${specRule}[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 1.7x ${hint}`]);
  });

  it('multiplies a rule by how many times it may run: maxItems above it, or as many values as fit in a request', () => {
    // The rule on each item costs ceil((32 + 1) / 10) × ceil(len(regex) 8 / 4) = 8, plus 1 for `self`: 9.
    const itemRule = (maxItems: number | undefined): Schema => ({
      type: 'object',
      properties: { spec: { type: 'object', properties: { items: { type: 'array', ...(maxItems === undefined ? {} : { maxItems }), items: { type: 'string', maxLength: 8, 'x-kubernetes-validations': [{ rule: "self.matches('^[a-z]+$')" }] } } } } },
    });
    const compiled = compileSchema(itemRule(10));
    const costs = [...(compiled?.rules.byNode.values() ?? [])].flat().map((r) => r.estimatedCost);
    expect(costs).to.deep.equal([90]);
    // Unbounded: a string item takes at least `""` and a comma, so 3 MiB / 3 = 1,048,576 of them: 9 × 1,048,576 = 9,437,184 (under the limit).
    const unbounded = [...(compileSchema(itemRule(undefined))?.rules.byNode.values() ?? [])].flat().map((r) => r.estimatedCost);
    expect(unbounded).to.deep.equal([9_437_184]);
  });

  it('refuses rules that together cost over 100,000,000, naming the four most expensive and the total', () => {
    // Twelve rules of 10·950² + 6·950 + 3 = 9,030,703 each: 108,368,436 in all.
    expect(pairwiseCost(950)).to.equal(9_030_703);
    const rules = Array.from({ length: 12 }, () => ({ rule: pairwise }));
    expect(costErrors(specWithList(950, rules))).to.deep.equal([
      ...[0, 1, 2, 3].map((i) => `${specRule}[${i}].rule: ${contributed}`),
      `${schemaPath}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.083684x ${hint}`,
    ]);
  });

  it('limits a messageExpression on its own, not multiplied by how many times its rule may run', () => {
    const schema = specWithList(undefined, [{ rule: 'true', messageExpression: "self.items.map(x, x + x).join(',')" }]);
    expect(costErrors(schema)).to.deep.equal([
      `${specRule}[0].messageExpression: Forbidden: estimated messageExpression cost exceeds budget by factor of more than 100x ${hint}`,
      `${specRule}[0].messageExpression: ${contributed}`,
      `${schemaPath}: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x ${hint}`,
    ]);
    // On the items of a list of 100 unbounded strings: `self.lowerAscii()` costs ceil(3,145,726 / 10) + 1 = 314,574.
    const items = (rule: Record<string, unknown>): Schema => ({
      type: 'object',
      properties: { spec: { type: 'object', properties: { names: { type: 'array', maxItems: 100, items: { type: 'string', 'x-kubernetes-validations': [rule] } } } } },
    });
    expect(costErrors(items({ rule: 'true', messageExpression: 'self.lowerAscii()' }))).to.deep.equal([]);
    // As a rule (with `== self`, 314,573 more), it runs up to 100 times: 62,914,800.
    expect(costErrors(items({ rule: 'self.lowerAscii() == self' }))).to.deep.equal([
      `${schemaPath}.properties[spec].properties[names].items.x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 6.3x ${hint}`,
    ]);
  });
});

describe('CEL cost at runtime (per evaluation and per request)', () => {
  /** Every pair of items compared, with no short cut: per inner step 9, so 9n² + 6n + 3 for n items, estimated and run alike. */
  const everyPair = 'self.items.all(x, self.items.all(y, x.size() <= y.size() + 100))';
  const everyPairCost = (n: number): number => 9 * n * n + 6 * n + 3;
  const items = (n: number): string[] => Array.from({ length: n }, (_, i) => `i${i}`);
  const object = (spec: Record<string, unknown>): Record<string, unknown> => ({ apiVersion: 'x.io/v1', kind: 'X', metadata: { name: 'n' }, spec });
  const errors = (schema: Schema, spec: Record<string, unknown>): string[] => {
    const compiled = compileSchema(schema);
    if (compiled === undefined) throw new Error('no schema');
    expect(costErrors(schema)).to.deep.equal([]);
    return validateCustomResource(compiled, object(spec)).errors.map((e) => `${e.field}: ${e.type}: ${e.shown ?? ''}: ${e.detail}`);
  };

  it('counts what a rule costs as it runs as kube estimates it, when it runs in full on a list at its bound', () => {
    const compiled = compileSchema(specWithList(10, [{ rule: everyPair }]));
    if (compiled === undefined) throw new Error('no schema');
    expect([...compiled.rules.byNode.values()].flat().map((r) => r.estimatedCost)).to.deep.equal([everyPairCost(10)]);
    expect(validateCustomResource(compiled, object({ items: items(10) })).errors).to.deep.equal([]);
    expect(compiled.rules.meter.cost).to.equal(everyPairCost(10));
  });

  it('counts only what runs: a short-circuited operand costs nothing', () => {
    const compiled = compileSchema(specWithList(10, [{ rule: `size(self.items) > 100 && ${everyPair}` }]));
    if (compiled === undefined) throw new Error('no schema');
    validateCustomResource(compiled, object({ items: items(10) }));
    // self 1, .items 1, size 1, 100 0, > 1.
    expect(compiled.rules.meter.cost).to.equal(4);
  });

  /** Items of one or two characters (at most 5,000), each looked for in a string of at most 2,500. */
  const lookups = (maxItems: number, count: number): Schema => ({
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: { long: { type: 'string', maxLength: 2500 }, items: { type: 'array', maxItems, items: { type: 'string', maxLength: 2 } } },
        'x-kubernetes-validations': [...Array.from({ length: count }, () => ({ rule: lookup })), { rule: 'false', message: 'never reached' }],
      },
    },
  });
  const lookup = 'self.items.all(x, self.long.contains(x))';
  const long = 'a'.repeat(2500);
  // Estimated per item: the condition 2, `@result &&` 1, contains ceil(10,000 / 10) × ceil(8 / 10) = 1,000, x 1, self.long 2: 1,006.
  // Run on 2,500 a's: contains costs 250 × 1, so 256 per item.
  const lookupCost = (n: number): number => 256 * n + 3;

  it('stops a rule that costs over 1,000,000 as it runs, and runs no further rule, in kube\'s words', () => {
    // Estimated at 1,006 × 5,000 + 3 = 5,030,003 (under the 10,000,000 a rule may be estimated at); run on 5,000 items, over 1,000,000.
    const compiled = compileSchema(lookups(5000, 1));
    expect([...(compiled?.rules.byNode.values() ?? [])].flat().map((r) => r.estimatedCost)).to.deep.equal([5_030_003, 0]);
    expect(lookupCost(5000)).to.be.greaterThan(1_000_000);
    expect(errors(lookups(5000, 1), { long, items: Array.from({ length: 5000 }, () => 'a') })).to.deep.equal([
      `spec: Invalid value: "object": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${lookup}`,
    ]);
    expect(errors(lookups(5000, 1), { long, items: Array.from({ length: 3000 }, () => 'a') })).to.deep.equal(['spec: Invalid value: "object": never reached']);
  });

  it('refuses a request whose rules together cost over 10,000,000 as they run: out of budget, no further rules', () => {
    // 3,000 items: 768,003 per rule as it runs; thirteen fit in the budget (9,984,039), the fourteenth does not.
    expect(lookupCost(3000)).to.equal(768_003);
    expect(errors(lookups(3000, 14), { long, items: Array.from({ length: 3000 }, () => 'a') })).to.deep.equal([
      'spec: Invalid value: "object": validation failed due to running out of cost budget, no further validation rules will be run',
    ]);
    expect(errors(lookups(3000, 13), { long, items: Array.from({ length: 3000 }, () => 'a') })).to.deep.equal(['spec: Invalid value: "object": never reached']);
  });
});
