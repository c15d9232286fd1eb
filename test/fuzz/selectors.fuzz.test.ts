import { expect } from 'chai';
import fc from 'fast-check';
import { parseFieldSelector, type FieldSelector } from '../../src/apiserver/selectors/fieldSelector.js';
import { labelSelectorFromObject, parseLabelSelector, type LabelOperator, type LabelSelector, type LabelSelectorObject } from '../../src/apiserver/selectors/labelSelector.js';
import { SelectorError } from '../../src/apiserver/selectors/selectorError.js';
import { mutated, oddValue } from './arbitraries.js';

/**
 * Label and field selector parsers fed random text and near-valid text (valid selectors with
 * random edits): each input is either a SelectorError or a selector whose canonical text parses
 * back to the same selector; generated valid selectors parse to what was generated and match as
 * a model says they should.
 */

/** Parses, turning a SelectorError into undefined and letting anything else fail the property. */
function tryParse<S>(parse: () => S): S | undefined {
  try {
    return parse();
  } catch (error) {
    if (error instanceof SelectorError) {
      expect(error.message).to.be.a('string').and.not.equal('');
      return undefined;
    }
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Label selectors

const alnum = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789');
const middle = fc.constantFrom(...'abcxyzABZ0189-_.');
const labelName = fc
  .tuple(alnum, fc.array(middle, { maxLength: 8 }), alnum)
  .map(([a, m, b]) => `${a}${m.join('')}${b}`)
  .filter((s) => s.length <= 63);
const shortName = fc.oneof(alnum, labelName);
const prefix = fc.array(fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,6}[a-z0-9])?$/), { minLength: 1, maxLength: 3 }).map((parts) => parts.join('.'));
const labelKey = fc.oneof({ weight: 3, arbitrary: shortName }, { weight: 1, arbitrary: fc.tuple(prefix, shortName).map(([p, n]) => `${p}/${n}`) });
const labelValue = fc.oneof(fc.constant(''), shortName);
// Kube checks a `gt`/`lt` value as a label value too, so negative numbers are rejected: only naturals are valid.
const integer = fc.bigInt({ min: 0n, max: 2n ** 63n - 1n }).map(String);

interface GeneratedRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

const requirement: fc.Arbitrary<GeneratedRequirement> = fc.oneof(
  fc.record({ key: labelKey, operator: fc.constantFrom<LabelOperator>('=', '==', '!='), values: labelValue.map((v) => [v]) }),
  fc.record({ key: labelKey, operator: fc.constantFrom<LabelOperator>('in', 'notin'), values: fc.array(labelValue, { maxLength: 4 }) }),
  fc.record({ key: labelKey, operator: fc.constantFrom<LabelOperator>('exists', '!'), values: fc.constant<string[]>([]) }),
  fc.record({ key: labelKey, operator: fc.constantFrom<LabelOperator>('gt', 'lt'), values: integer.map((v) => [v]) }),
);

const space = fc.constantFrom('', ' ', '  ', '\t', '\n', '\r\n');

/** One requirement in kube's string syntax, with random (legal) whitespace. */
function requirementText(r: GeneratedRequirement, ws: () => string): string {
  switch (r.operator) {
    case 'exists':
      return r.key;
    case '!':
      return `!${ws()}${r.key}`;
    case 'in':
    case 'notin':
      return `${r.key} ${r.operator}${ws()}(${ws()}${r.values.join(`${ws()},${ws()}`)}${ws()})`;
    case 'gt':
      return `${r.key}${ws()}>${ws()}${r.values[0]}`;
    case 'lt':
      return `${r.key}${ws()}<${ws()}${r.values[0]}`;
    default:
      return `${r.key}${ws()}${r.operator}${ws()}${r.values[0]}`;
  }
}

const validLabelSelector = fc
  .tuple(fc.array(requirement, { maxLength: 5 }), fc.infiniteStream(space))
  .map(([requirements, spaces]) => {
    const ws = () => spaces.next().value as string;
    return { requirements, text: `${ws()}${requirements.map((r) => requirementText(r, ws)).join(`${ws()},${ws()}`)}${ws()}` };
  });

/** What the requirement should have parsed to: `in ()` is one empty value, sets sorted and de-duplicated. */
function expectedRequirement(r: GeneratedRequirement): { key: string; operator: LabelOperator; values: string[] } {
  if (r.operator === 'in' || r.operator === 'notin') {
    const values = r.values.length === 0 ? [''] : r.values;
    return { key: r.key, operator: r.operator, values: [...new Set(values)].sort() };
  }
  return { key: r.key, operator: r.operator, values: r.values };
}

/** The meaning of a requirement, written independently of the parser's matcher. */
function modelMatches(r: GeneratedRequirement, labels: Record<string, string>): boolean {
  const has = Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = labels[r.key];
  const values = expectedRequirement(r).values;
  switch (r.operator) {
    case 'exists':
      return has;
    case '!':
      return !has;
    case '=':
    case '==':
    case 'in':
      return has && values.includes(value as string);
    case '!=':
    case 'notin':
      return !has || !values.includes(value as string);
    case 'gt':
    case 'lt': {
      if (!has || !/^[+-]?\d+$/.test(value as string)) return false;
      const actual = BigInt(value as string);
      if (actual < -(2n ** 63n) || actual >= 2n ** 63n) return false;
      return r.operator === 'gt' ? actual > BigInt(values[0] as string) : actual < BigInt(values[0] as string);
    }
  }
}

/** The label sets to match against: built from the selector's own keys and values, so matches are not all misses. */
function labelsFor(requirements: GeneratedRequirement[]): fc.Arbitrary<Record<string, string>> {
  const keys = [...new Set(requirements.map((r) => r.key)), 'other'];
  const values = [...new Set(requirements.flatMap((r) => r.values)), '', 'x', '7', '-3', '99999999999999999999'];
  return fc.dictionary(fc.constantFrom(...keys), fc.constantFrom(...values), { maxKeys: keys.length });
}

function roundTripsLabel(selector: LabelSelector): void {
  const text = selector.toString();
  const again = parseLabelSelector(text);
  expect(again.requirements, `the canonical form ${JSON.stringify(text)} parses back to the same selector`).to.deep.equal(selector.requirements);
  expect(again.toString()).to.equal(text);
}

// ---------------------------------------------------------------------------------------------
// Field selectors

const fields = ['metadata.name', 'metadata.namespace', 'spec.nodeName', 'status.phase'];
const fieldValueText = fc.string({ unit: fc.constantFrom('a', 'b', '-', '.', '\\', ',', '=', '!', ' ', 'é', '名'), maxLength: 10 });
const fieldRequirement = fc.record({ field: fc.constantFrom(...fields), operator: fc.constantFrom('=', '==', '!='), value: fieldValueText });
const escape = (value: string) => value.replace(/[\\,=]/g, (c) => `\\${c}`);
const validFieldSelector = fc.array(fieldRequirement, { maxLength: 4 }).map((requirements) => ({
  requirements,
  text: requirements.map((r) => `${r.field}${r.operator}${escape(r.value)}`).join(','),
}));

/**
 * Kube orders field requirements by their text as written, so the canonical text of `a==x,a=y`
 * lists them in another order: the round trip keeps the same requirements (an AND, so order is
 * no meaning), and the canonical text is a fixed point from then on.
 */
function roundTripsField(selector: FieldSelector): void {
  const text = selector.toString();
  const again = parseFieldSelector(text, fields);
  const sorted = (s: FieldSelector) => s.requirements.map((r) => JSON.stringify(r)).sort();
  expect(sorted(again), `the canonical form ${JSON.stringify(text)} parses back to the same requirements`).to.deep.equal(sorted(selector));
  expect(parseFieldSelector(again.toString(), fields).toString()).to.equal(again.toString());
}

// ---------------------------------------------------------------------------------------------

const selectorChars = fc.constantFrom(...'abz09-_./=!<>(),\\ \t\n', 'in', 'notin', 'é', '\u0000', '\ud83d\ude00', '\ud800');
const selectorNoise = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: selectorChars, maxLength: 30 }),
);

describe('fuzz: label and field selector parsers', () => {
  it('answer random text with a selector that round-trips or a SelectorError, nothing else', () => {
    fc.assert(
      fc.property(selectorNoise, (text) => {
        const label = tryParse(() => parseLabelSelector(text));
        if (label !== undefined) roundTripsLabel(label);
        const field = tryParse(() => parseFieldSelector(text, fields));
        if (field !== undefined) roundTripsField(field);
      }),
      { numRuns: 3000 },
    );
  });

  it('answer near-valid label selectors (valid ones with random edits) with a round-tripping selector or a SelectorError', () => {
    fc.assert(
      fc.property(mutated(validLabelSelector.map((s) => s.text), selectorChars), (text) => {
        const label = tryParse(() => parseLabelSelector(text));
        if (label !== undefined) roundTripsLabel(label);
      }),
      { numRuns: 3000 },
    );
  });

  it('answer near-valid field selectors (valid ones with random edits) with a round-tripping selector or a SelectorError', () => {
    fc.assert(
      fc.property(mutated(validFieldSelector.map((s) => s.text), selectorChars), (text) => {
        const field = tryParse(() => parseFieldSelector(text, fields));
        if (field !== undefined) roundTripsField(field);
      }),
      { numRuns: 3000 },
    );
  });

  it('turn any metav1.LabelSelector object (as stored JSON may hold it) into a selector whose text means the same, or a SelectorError', () => {
    const expression = fc.record(
      { key: fc.oneof(labelKey, oddValue), operator: fc.oneof(fc.constantFrom('In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt'), oddValue), values: fc.oneof(fc.array(labelValue, { maxLength: 3 }), oddValue) },
      { requiredKeys: [] },
    );
    const selectorObject = fc.oneof(
      fc.record(
        {
          matchLabels: fc.oneof(fc.dictionary(labelKey, labelValue, { maxKeys: 3 }), fc.dictionary(fc.string({ maxLength: 4 }), oddValue, { maxKeys: 2 }), oddValue),
          matchExpressions: fc.oneof(fc.array(fc.oneof(expression, oddValue), { maxLength: 3 }), oddValue),
        },
        { requiredKeys: [] },
      ),
      oddValue,
    );
    fc.assert(
      fc.property(selectorObject, fc.array(fc.dictionary(labelKey, labelValue, { maxKeys: 3 }), { maxLength: 3 }), (sel, extraLabels) => {
        const selector = tryParse(() => labelSelectorFromObject(sel as LabelSelectorObject));
        if (selector === undefined || sel === null || sel === undefined) return;
        // Like kube's String(), the text keeps duplicate values (`k in (,)`) that parsing then
        // merges: the text means the same selector, and is canonical after one parse.
        const again = parseLabelSelector(selector.toString());
        expect(parseLabelSelector(again.toString()).toString(), `the text of ${JSON.stringify(sel)}`).to.equal(again.toString());
        const own = selector.requirements.map((r) => Object.fromEntries(r.values.slice(0, 1).map((v) => [r.key, v])));
        for (const labels of [...own, Object.assign({}, ...own) as Record<string, string>, ...extraLabels]) {
          expect(again.matches(labels), `${JSON.stringify(sel)} on ${JSON.stringify(labels)}`).to.equal(selector.matches(labels));
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('parse every valid label selector to what was written, matching labels as the model does', () => {
    const cases = validLabelSelector.chain((s) => fc.tuple(fc.constant(s), fc.array(labelsFor(s.requirements), { minLength: 1, maxLength: 5 })));
    fc.assert(
      fc.property(cases, ([{ requirements, text }, labelSets]) => {
        const selector = parseLabelSelector(text);
        const expected = requirements.map(expectedRequirement);
        const sortedExpected = [...expected].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
        expect(selector.requirements).to.deep.equal(sortedExpected);
        roundTripsLabel(selector);
        for (const labels of labelSets) {
          expect(selector.matches(labels), `${JSON.stringify(text)} on ${JSON.stringify(labels)}`).to.equal(
            requirements.every((r) => modelMatches(r, labels)),
          );
        }
      }),
      { numRuns: 1500 },
    );
  });

  it('parse every valid field selector to the unescaped values, matching objects as the model does', () => {
    const objectOf = fc.record({ metadata: fc.record({ name: fieldValueText, namespace: fieldValueText }), spec: fc.record({ nodeName: fieldValueText }) });
    fc.assert(
      fc.property(validFieldSelector, fc.array(objectOf, { maxLength: 4 }), ({ requirements, text }, objects) => {
        const selector = parseFieldSelector(text, fields);
        const expected = requirements
          .map((r) => ({ term: `${r.field}${r.operator}${escape(r.value)}`, r }))
          .sort((a, b) => (a.term < b.term ? -1 : a.term > b.term ? 1 : 0))
          .map(({ r }) => ({ field: r.field, operator: r.operator === '!=' ? '!=' : '=', value: r.value }));
        expect(selector.requirements).to.deep.equal(expected);
        roundTripsField(selector);
        for (const object of objects) {
          const read = (field: string): string =>
            field === 'metadata.name' ? object.metadata.name : field === 'metadata.namespace' ? object.metadata.namespace : field === 'spec.nodeName' ? object.spec.nodeName : '';
          const model = requirements.every((r) => (read(r.field) === r.value) === (r.operator !== '!='));
          expect(selector.matches(object), `${JSON.stringify(text)} on ${JSON.stringify(object)}`).to.equal(model);
        }
      }),
      { numRuns: 1500 },
    );
  });
});
