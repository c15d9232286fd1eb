import { expect } from 'chai';
import { estimateCost } from '../../src/apiserver/validation/cel/costEstimate.js';
import { declOf } from '../../src/apiserver/validation/cel/costModel.js';
import { parseWithOptionals } from '../../src/apiserver/validation/cel/optionalSyntax.js';
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
