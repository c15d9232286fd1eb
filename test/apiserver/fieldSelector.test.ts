import { expect } from 'chai';
import fc from 'fast-check';
import { defaultFieldsFor, escapeFieldValue, fieldValue, parseFieldSelector, usesDefaultFieldConversion } from '../../src/apiserver/selectors/fieldSelector.js';
import { SelectorError } from '../../src/apiserver/selectors/selectorError.js';
import { catchError } from './catchError.js';

// Expected results follow apimachinery pkg/fields (selector.go and its tests), the field-label
// conversions of kube's core/v1 and apps/v1, and the "Field Selectors" concept page.

const podFields = defaultFieldsFor('Pod');
const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-1', namespace: 'default' },
  spec: { nodeName: 'node-a', restartPolicy: 'Always' },
  status: { phase: 'Running', podIPs: [{ ip: '10.0.0.7' }], podIP: '10.0.0.7' },
};

describe('parseFieldSelector', () => {
  describe('matching (docs: =, == and != on supported fields)', () => {
    const cases: Array<[string, boolean]> = [
      ['', true],
      ['metadata.name=web-1', true],
      ['metadata.name==web-1', true],
      ['metadata.name!=web-1', false],
      ['metadata.name=web-2', false],
      ['metadata.namespace=default,status.phase=Running', true],
      ['status.phase!=Running,spec.restartPolicy=Always', false],
      ['spec.schedulerName=', true],
      ['spec.schedulerName!=', false],
      ['spec.nodeName=node-a,,', true],
      ['status.podIP=10.0.0.7', true],
      ['spec.hostNetwork=false', true],
    ];
    for (const [selector, expected] of cases) {
      it(`${JSON.stringify(selector)} ${expected ? 'matches' : 'does not match'} the pod`, () => {
        expect(parseFieldSelector(selector, podFields).matches(pod)).to.equal(expected);
      });
    }
  });

  it('unescapes \\, \\= and \\\\ in values (fields.UnescapeValue)', () => {
    const selector = parseFieldSelector('metadata.name=a\\,b\\=c\\\\d', ['metadata.name']);
    expect(selector.requirements).to.deep.equal([{ field: 'metadata.name', operator: '=', value: 'a,b=c\\d' }]);
    expect(selector.matches({ metadata: { name: 'a,b=c\\d' } })).to.equal(true);
    expect(selector.toString()).to.equal('metadata.name=a\\,b\\=c\\\\d');
  });

  it('does not split on an escaped comma', () => {
    expect(parseFieldSelector('metadata.name=a\\,b', podFields).requirements).to.deep.equal([
      { field: 'metadata.name', operator: '=', value: 'a,b' },
    ]);
    // The escaped comma keeps "metadata.namespace=b" inside the value, whose bare '=' kube rejects.
    expect(() => parseFieldSelector('metadata.name=a\\,metadata.namespace=b', podFields)).to.throw(SelectorError, 'unescaped character');
  });

  it('keeps kube order (terms sorted by text) and prints == as =', () => {
    expect(parseFieldSelector('status.phase==Running,metadata.name!=x', podFields).toString()).to.equal(
      'metadata.name!=x,status.phase=Running',
    );
  });

  it('does not trim spaces: "a = b" names the field "a "', () => {
    const error = catchSelectorError(() => parseFieldSelector('metadata.name = x', podFields));
    expect(error.reason).to.equal('field label not supported: metadata.name ');
  });

  it('reads a missing field as the empty string', () => {
    expect(parseFieldSelector('spec.nodeName=', podFields).matches({ kind: 'Pod', metadata: {} })).to.equal(true);
    expect(parseFieldSelector('spec.nodeName!=', podFields).matches({ kind: 'Pod', metadata: {} })).to.equal(false);
  });

  it('answers requiresExactMatch for = terms only', () => {
    expect(parseFieldSelector('metadata.name=x', podFields).requiresExactMatch('metadata.name')).to.equal('x');
    expect(parseFieldSelector('metadata.name!=x', podFields).requiresExactMatch('metadata.name')).to.equal(undefined);
  });

  describe("errors carry kube's wording", () => {
    const cases: Array<[string, string, number]> = [
      ['metadata.name', "invalid selector: 'metadata.name'; can't understand 'metadata.name'", 0],
      ['status.phase=a,foo', "invalid selector: 'status.phase=a,foo'; can't understand 'foo'", 15],
      ['metadata.name=a\\b', 'invalid field selector: invalid escape sequence: \\b', 15],
      ['metadata.name=a\\', 'invalid field selector: invalid escape sequence: \\', 15],
      ['metadata.name=a=b', 'invalid field selector: unescaped character in value: 61', 15],
      ['spec.foo=bar', 'field label not supported: spec.foo', 0],
      ['metadata.name=a,spec.foo=bar', 'field label not supported: spec.foo', 16],
    ];
    for (const [input, reason, position] of cases) {
      it(`rejects ${JSON.stringify(input)}: ${reason}`, () => {
        const error = catchSelectorError(() => parseFieldSelector(input, podFields));
        expect(error.reason).to.equal(reason);
        expect(error.position).to.equal(position);
      });
    }

    it('uses the default conversion message for kinds without their own field list', () => {
      expect(usesDefaultFieldConversion('ConfigMap')).to.equal(true);
      expect(usesDefaultFieldConversion({ group: 'apps', kind: 'Deployment' })).to.equal(true);
      expect(usesDefaultFieldConversion('Pod')).to.equal(false);
      const error = catchSelectorError(() =>
        parseFieldSelector('foo.bar=baz', defaultFieldsFor('ConfigMap'), { defaultConversion: true }),
      );
      expect(error.reason).to.equal('"foo.bar" is not a known field selector: only "metadata.name", "metadata.namespace"');
    });
  });

  describe('properties', () => {
    it('round-trips any values through toString (escaping)', () => {
      fc.assert(
        fc.property(fc.array(fc.tuple(fc.constantFrom(...podFields), fc.constantFrom('=', '!='), fc.string()), { maxLength: 4 }), (terms) => {
          const text = terms.map(([f, op, v]) => `${f}${op}${escapeFieldValue(v)}`).join(',');
          const parsed = parseFieldSelector(text, podFields);
          expect(parsed.requirements).to.have.length(terms.length);
          const again = parseFieldSelector(parsed.toString(), podFields);
          expect(again.requirements).to.deep.equal(parsed.requirements);
        }),
      );
    });

    it('never throws anything but SelectorError on random text', () => {
      fc.assert(
        fc.property(fc.oneof(fc.string(), fc.stringMatching(/^[a-z.=!,\\]{0,20}$/)), (text) => {
          try {
            parseFieldSelector(text, ['a', 'a.b', 'metadata.name']);
          } catch (e) {
            expect(e).to.be.instanceOf(SelectorError);
          }
        }),
        { numRuns: 2000 },
      );
    });
  });
});

describe('defaultFieldsFor and fieldValue (kube GetAttrs / ToSelectableFields)', () => {
  it('lists the fields kube supports per kind', () => {
    expect(defaultFieldsFor('Pod')).to.include.members(['metadata.name', 'metadata.namespace', 'spec.nodeName', 'status.phase', 'status.podIP']);
    expect(defaultFieldsFor('Secret')).to.deep.equal(['metadata.name', 'metadata.namespace', 'type']);
    expect(defaultFieldsFor('Event')).to.include.members(['involvedObject.name', 'involvedObject.uid', 'reason', 'source', 'type']);
    expect(defaultFieldsFor('Namespace')).to.deep.equal(['metadata.name', 'status.phase']);
    expect(defaultFieldsFor('ConfigMap')).to.deep.equal(['metadata.name', 'metadata.namespace']);
    expect(defaultFieldsFor({ group: 'events.k8s.io', kind: 'Event' })).to.deep.equal(['metadata.name', 'metadata.namespace']);
    expect(defaultFieldsFor({ group: 'apps', kind: 'ReplicaSet' })).to.include('status.replicas');
  });

  it("reads a Pod's status.podIP from podIPs[0] and spec.hostNetwork as false when unset", () => {
    expect(fieldValue({ kind: 'Pod', status: { podIPs: [{ ip: '1.2.3.4' }] } }, 'status.podIP')).to.equal('1.2.3.4');
    expect(fieldValue({ kind: 'Pod', status: { podIP: '5.6.7.8' } }, 'status.podIP')).to.equal('5.6.7.8');
    expect(fieldValue({ kind: 'Pod', spec: {} }, 'spec.hostNetwork')).to.equal('false');
    expect(fieldValue({ kind: 'Pod', spec: { hostNetwork: true } }, 'spec.hostNetwork')).to.equal('true');
  });

  it("reads a core Event's source from source.component, falling back to reportingComponent", () => {
    expect(fieldValue({ apiVersion: 'v1', kind: 'Event', source: { component: 'kubelet' } }, 'source')).to.equal('kubelet');
    expect(fieldValue({ apiVersion: 'v1', kind: 'Event', reportingComponent: 'ctrl' }, 'source')).to.equal('ctrl');
    const selector = parseFieldSelector('involvedObject.kind=Pod,type=Warning', defaultFieldsFor('Event'));
    expect(selector.matches({ kind: 'Event', involvedObject: { kind: 'Pod' }, type: 'Warning' })).to.equal(true);
  });

  it('formats numbers and booleans as text and treats objects as empty', () => {
    expect(fieldValue({ status: { replicas: 3 } }, 'status.replicas')).to.equal('3');
    expect(fieldValue({ spec: { unschedulable: true } }, 'spec.unschedulable')).to.equal('true');
    expect(fieldValue({ spec: { x: { y: 1 } } }, 'spec.x')).to.equal('');
  });
});

const catchSelectorError = (fn: () => unknown): SelectorError => catchError(fn, SelectorError);
