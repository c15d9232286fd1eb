import { expect } from 'chai';
import fc from 'fast-check';
import { LabelSelector, labelSelectorFromObject, parseLabelSelector, type LabelSelectorObject } from '../../src/apiserver/selectors/labelSelector.js';
import { SelectorError } from '../../src/apiserver/selectors/selectorError.js';
import { catchError } from './catchError.js';

// Expected results follow apimachinery pkg/labels (selector.go and its tests) and the
// "Labels and Selectors" concept page of the Kubernetes docs.

const labels = { app: 'web', tier: 'frontend', env: 'prod', count: '7' };

describe('parseLabelSelector', () => {
  describe('matching (docs: equality- and set-based requirements)', () => {
    const cases: Array<[string, Record<string, string> | undefined, boolean]> = [
      ['', labels, true],
      ['   ', labels, true],
      ['', undefined, true],
      ['app=web', labels, true],
      ['app==web', labels, true],
      ['app=db', labels, false],
      ['app!=db', labels, true],
      ['app!=web', labels, false],
      ['missing!=x', labels, true],
      ['missing=x', labels, false],
      ['app in (web,db)', labels, true],
      ['app in (db)', labels, false],
      ['missing in (x)', labels, false],
      ['app notin (db,cache)', labels, true],
      ['app notin (web)', labels, false],
      ['missing notin (x)', labels, true],
      ['app', labels, true],
      ['missing', labels, false],
      ['!missing', labels, true],
      ['!app', labels, false],
      ['app=web,tier=frontend', labels, true],
      ['app=web,tier=backend', labels, false],
      ['app=web, env in (prod,qa), !legacy', labels, true],
      ['count>5', labels, true],
      ['count>7', labels, false],
      ['count<10', labels, true],
      ['app>1', labels, false],
      ['missing>1', labels, false],
      ['app=', { app: '' }, true],
      ['app=', labels, false],
      ['app in ()', { app: '' }, true],
      ['app in (,web)', labels, true],
      ['app in (,web)', { app: '' }, true],
      ['in in (in)', { in: 'in' }, true],
      ['notin notin (in)', { notin: 'x' }, true],
      ['example.com/role=db', { 'example.com/role': 'db' }, true],
    ];
    for (const [selector, set, expected] of cases) {
      it(`${JSON.stringify(selector)} ${expected ? 'matches' : 'does not match'} ${JSON.stringify(set)}`, () => {
        expect(parseLabelSelector(selector).matches(set)).to.equal(expected);
      });
    }
  });

  describe('whitespace as kube allows it (spaces, tabs, CR, LF around tokens)', () => {
    const equivalent: Array<[string, string]> = [
      ['  app = web ', 'app=web'],
      ['app\t!=\tweb', 'app!=web'],
      ['app in(web, db)', 'app in (db,web)'],
      ['app\nnotin\r\n( web ,db )', 'app notin (db,web)'],
      ['! app', '!app'],
      ['a , b', 'a,b'],
    ];
    for (const [input, canonical] of equivalent) {
      it(`parses ${JSON.stringify(input)} as ${canonical}`, () => {
        expect(parseLabelSelector(input).toString()).to.equal(canonical);
      });
    }
  });

  describe('canonical toString (kube String(): sorted by key, values sorted, == kept)', () => {
    const cases: Array<[string, string]> = [
      ['z=1,a=2', 'a=2,z=1'],
      ['x in (c,a,b,a)', 'x in (a,b,c)'],
      ['x==y', 'x==y'],
      ['!b,a', 'a,!b'],
      ['x in (foo,,baz),y,z notin ()', 'x in (,baz,foo),y,z notin ()'],
      ['n>3,m<4', 'm<4,n>3'],
    ];
    for (const [input, canonical] of cases) {
      it(`${JSON.stringify(input)} prints as ${JSON.stringify(canonical)}`, () => {
        expect(parseLabelSelector(input).toString()).to.equal(canonical);
      });
    }
    it('reports an empty selector as empty and a non-empty one as not', () => {
      expect(parseLabelSelector('').empty).to.equal(true);
      expect(parseLabelSelector('a').empty).to.equal(false);
    });
  });

  describe("errors carry kube's wording and the position of the bad part", () => {
    const cases: Array<[string, string, number]> = [
      ['a b', "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt", 2],
      ['a=b c', "found 'c', expected: ',' or 'end of string'", 4],
      ['a,', "found '', expected: identifier after ','", 2],
      [',a', "found ',', expected: !, identifier, or 'end of string'", 0],
      ['a=(b', "unable to parse requirement: found '(', expected: identifier", 2],
      ['a in b', "unable to parse requirement: found 'b' expected: '('", 5],
      ['a in (b c)', "unable to parse requirement: found 'c', expected: ',' or ')'", 8],
      ['a in (=)', "unable to parse requirement: found '=', expected: ',', ')' or identifier", 6],
      ['a in (b,', "unable to parse requirement: found '', expected: ',', or identifier", 8],
      ['a (b)', "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt", 2],
      ['!=a', "found '!=', expected: !, identifier, or 'end of string'", 0],
      ['!(a', "unable to parse requirement: found '(', expected: identifier", 1],
      ['!a=b', "found '=', expected: ',' or 'end of string'", 2],
      ['a>x', "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer", 2],
    ];
    for (const [input, reason, position] of cases) {
      it(`rejects ${JSON.stringify(input)}: ${reason}`, () => {
        const error = catchSelectorError(() => parseLabelSelector(input));
        expect(error.reason).to.equal(reason);
        expect(error.position).to.equal(position);
        expect(error.message).to.contain(reason).and.contain(`position ${position}`);
      });
    }

    it('validates keys like IsQualifiedName (name part of at most 63 characters)', () => {
      const error = catchSelectorError(() => parseLabelSelector(`${'k'.repeat(64)}=v`));
      expect(error.reason).to.equal(
        `unable to parse requirement: <nil>: Invalid value: "${'k'.repeat(64)}": name part must be no more than 63 characters`,
      );
    });

    it('validates key prefixes as DNS subdomains and rejects a second slash', () => {
      expect(catchSelectorError(() => parseLabelSelector('Example.com/x')).reason).to.contain(
        'prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters',
      );
      expect(catchSelectorError(() => parseLabelSelector('/x')).reason).to.contain('prefix part must be non-empty');
      expect(catchSelectorError(() => parseLabelSelector('a/b/c')).reason).to.contain(
        "a qualified name must consist of alphanumeric characters, '-', '_' or '.'",
      );
      expect(catchSelectorError(() => parseLabelSelector('a/')).reason).to.contain('name part must be non-empty');
    });

    it('validates values (start and end alphanumeric, at most 63 characters) with the key in the path', () => {
      const error = catchSelectorError(() => parseLabelSelector('app=-web'));
      expect(error.reason).to.equal(
        'unable to parse requirement: values[0][app]: Invalid value: "-web": a valid label must be an empty string or ' +
          "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
          "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
      );
      expect(catchSelectorError(() => parseLabelSelector(`a=${'v'.repeat(64)}`)).reason).to.contain(
        'must be no more than 63 characters',
      );
      expect(parseLabelSelector(`a=${'v'.repeat(63)}`).matches({ a: 'v'.repeat(63) })).to.equal(true);
      expect(parseLabelSelector('a=my_value.1-x').toString()).to.equal('a=my_value.1-x');
    });

    it('aggregates several invalid values as kube does: [e1, e2]', () => {
      const error = catchSelectorError(() => parseLabelSelector('a in (-x,-y)'));
      expect(error.reason).to.match(/^unable to parse requirement: \[values\[0\]\[a\]: .*, values\[1\]\[a\]: .*\]$/);
    });
  });

  describe('properties', () => {
    const keyArb = fc.stringMatching(/^([a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?\/)?[A-Za-z0-9]([A-Za-z0-9_.-]{0,10}[A-Za-z0-9])?$/);
    const valueArb = fc.stringMatching(/^([A-Za-z0-9]([A-Za-z0-9_.-]{0,10}[A-Za-z0-9])?)?$/);
    const requirementArb = fc.oneof(
      fc.tuple(keyArb, fc.constantFrom('=', '==', '!='), valueArb).map(([k, op, v]) => `${k}${op}${v}`),
      fc.tuple(keyArb, fc.constantFrom('in', 'notin'), fc.array(valueArb, { minLength: 1, maxLength: 4 })).map(
        ([k, op, vs]) => `${k} ${op} (${vs.join(',')})`,
      ),
      keyArb,
      keyArb.map((k) => `!${k}`),
      fc.tuple(keyArb, fc.constantFrom(">", "<"), fc.nat()).map(([k, op, n]) => `${k}${op}${n}`),
    );
    const selectorArb = fc.array(requirementArb, { maxLength: 5 }).map((rs) => rs.join(','));
    const labelsArb = fc.dictionary(keyArb, valueArb, { maxKeys: 5 });

    it('round-trips: parse(toString(s)) prints and matches the same as s', () => {
      fc.assert(
        fc.property(selectorArb, labelsArb, (text, set) => {
          const parsed = parseLabelSelector(text);
          const again = parseLabelSelector(parsed.toString());
          expect(again.toString()).to.equal(parsed.toString());
          expect(again.matches(set)).to.equal(parsed.matches(set));
        }),
      );
    });

    it('never throws anything but SelectorError on random text', () => {
      const noisy = fc.oneof(fc.string(), fc.stringMatching(/^[a-z!=(), \tin]{0,20}$/));
      fc.assert(
        fc.property(noisy, (text) => {
          try {
            parseLabelSelector(text);
          } catch (e) {
            expect(e).to.be.instanceOf(SelectorError);
          }
        }),
        { numRuns: 2000 },
      );
    });

    it('a selector of key=value terms matches exactly the label sets that contain them', () => {
      fc.assert(
        fc.property(labelsArb, labelsArb, (wanted, set) => {
          const text = Object.entries(wanted)
            .map(([k, v]) => `${k}=${v}`)
            .join(',');
          const expected = Object.entries(wanted).every(([k, v]) => set[k] === v && Object.hasOwn(set, k));
          expect(parseLabelSelector(text).matches(set)).to.equal(expected);
        }),
      );
    });
  });
});

describe('labelSelectorFromObject (metav1.LabelSelectorAsSelector)', () => {
  it('matches nothing for a null selector and everything for an empty one', () => {
    expect(labelSelectorFromObject(null).matches(labels)).to.equal(false);
    expect(labelSelectorFromObject(null).empty).to.equal(false);
    expect(labelSelectorFromObject({}).matches(labels)).to.equal(true);
    expect(labelSelectorFromObject({ matchLabels: {}, matchExpressions: [] }).empty).to.equal(true);
  });

  it('ANDs matchLabels with matchExpressions of every operator', () => {
    const selector = labelSelectorFromObject({
      matchLabels: { app: 'web' },
      matchExpressions: [
        { key: 'env', operator: 'In', values: ['prod', 'qa'] },
        { key: 'tier', operator: 'NotIn', values: ['backend'] },
        { key: 'count', operator: 'Exists' },
        { key: 'legacy', operator: 'DoesNotExist' },
      ],
    });
    expect(selector).to.be.instanceOf(LabelSelector);
    expect(selector.matches(labels)).to.equal(true);
    expect(selector.matches({ ...labels, legacy: 'yes' })).to.equal(false);
    expect(selector.matches({ ...labels, env: 'dev' })).to.equal(false);
    expect(selector.toString()).to.equal('app=web,count,env in (prod,qa),!legacy,tier notin (backend)');
  });

  it("rejects an unknown operator with kube's message", () => {
    const error = catchSelectorError(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Gt', values: ['1'] }] }));
    expect(error.reason).to.equal('"Gt" is not a valid label selector operator');
  });

  it('rejects In without values and Exists with values (NewRequirement rules)', () => {
    expect(catchSelectorError(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] })).reason).to.equal(
      "values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty",
    );
    expect(
      catchSelectorError(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] })).reason,
    ).to.equal('values: Invalid value: []string{"x"}: values set must be empty for exists and does not exist');
  });

  it('answers a selector of the wrong shape from stored JSON with a SelectorError, never a TypeError', () => {
    const odd: unknown[] = [
      'app=web',
      5,
      [],
      { matchLabels: 'x' },
      { matchLabels: { app: 5 } },
      { matchExpressions: 'x' },
      { matchExpressions: [null] },
      { matchExpressions: [{ key: 5, operator: 'In', values: ['a'] }] },
      { matchExpressions: [{ key: 'a', operator: 'In', values: 'a' }] },
      { matchExpressions: [{ key: 'a', operator: 'In', values: [1] }] },
    ];
    for (const sel of odd) {
      const error = catchSelectorError(() => labelSelectorFromObject(sel as LabelSelectorObject));
      expect(error.message, JSON.stringify(sel)).to.contain(`(got ${JSON.stringify(sel)})`);
    }
    const noPrototype: unknown = Object.create(null);
    expect(catchSelectorError(() => labelSelectorFromObject({ matchExpressions: [{ key: 'a', operator: noPrototype as unknown as string }] })).reason).to.equal(
      '{} is not a valid label selector operator',
    );
    expect(catchSelectorError(() => labelSelectorFromObject({ matchLabels: { app: 5 } } as unknown as LabelSelectorObject)).reason).to.equal(
      'matchLabels["app"] must be a string (got {"matchLabels":{"app":5}})',
    );
  });

  it('validates matchLabels keys and values', () => {
    expect(catchSelectorError(() => labelSelectorFromObject({ matchLabels: { 'bad key': 'x' } })).reason).to.match(/^key: Invalid value: "bad key": name part/);
    expect(catchSelectorError(() => labelSelectorFromObject({ matchLabels: { a: 'bad value' } })).reason).to.match(
      /^values\[0\]\[a\]: Invalid value: "bad value": a valid label/,
    );
  });
});

const catchSelectorError = (fn: () => unknown): SelectorError => catchError(fn, SelectorError);
