import { expect } from 'chai';
import type { PolicyRule } from '../../src/apiserver/auth/policyRule.js';
import { compactRules, compactString, uncoveredRules } from '../../src/apiserver/auth/ruleCovers.js';
import { base64ErrorOffset } from '../../src/apiserver/api/goBase64.js';

// Expected results follow kube's Covers (component-helpers/auth/rbac/validation), CompactRules and
// CompactString (pkg/registry/rbac/validation, pkg/apis/rbac/v1), and Go's base64.StdEncoding.

const missing = (held: PolicyRule[], wanted: PolicyRule[]): string[] => compactRules(uncoveredRules(held, wanted)).map(compactString).sort();

describe('RBAC rule covering (kube escalation check)', () => {
  it('covers a subresource by resource/sub or */sub, and never by the resource alone', () => {
    const scale = [{ apiGroups: ['apps'], resources: ['deployments/scale'], verbs: ['update'] }];
    expect(missing([{ apiGroups: ['apps'], resources: ['*/scale'], verbs: ['update'] }], scale)).to.deep.equal([]);
    expect(missing([{ apiGroups: ['apps'], resources: ['deployments/scale'], verbs: ['*'] }], scale)).to.deep.equal([]);
    expect(missing([{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['update'] }], scale)).to.deep.equal(['{APIGroups:["apps"], Resources:["deployments/scale"], Verbs:["update"]}']);
  });

  it('covers a non-resource URL by itself or a prefix ending in *, and lists each uncovered URL with its verbs apart', () => {
    expect(missing([{ nonResourceURLs: ['/healthz/*'], verbs: ['get'] }], [{ nonResourceURLs: ['/healthz/ready'], verbs: ['get'] }])).to.deep.equal([]);
    expect(missing([{ nonResourceURLs: ['/healthz/*'], verbs: ['get'] }], [{ nonResourceURLs: ['/metrics', '/healthz'], verbs: ['get', 'post'] }])).to.deep.equal([
      '{NonResourceURLs:["/healthz"], Verbs:["get"]}',
      '{NonResourceURLs:["/healthz"], Verbs:["post"]}',
      '{NonResourceURLs:["/metrics"], Verbs:["get"]}',
      '{NonResourceURLs:["/metrics"], Verbs:["post"]}',
    ]);
  });

  it('needs every atom covered by one held rule, and merges verbs per group, resource and name', () => {
    const held = [
      { apiGroups: [''], resources: ['pods'], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods'], verbs: ['list'], resourceNames: ['a'] },
    ];
    const wanted = [{ apiGroups: ['', 'apps'], resources: ['pods'], verbs: ['get', 'list'], resourceNames: ['a', 'b'] }];
    expect(missing(held, wanted)).to.deep.equal([
      '{APIGroups:[""], Resources:["pods"], ResourceNames:["b"], Verbs:["list"]}',
      '{APIGroups:["apps"], Resources:["pods"], ResourceNames:["a"], Verbs:["get" "list"]}',
      '{APIGroups:["apps"], Resources:["pods"], ResourceNames:["b"], Verbs:["get" "list"]}',
    ]);
  });
});

describe("Go's base64 decoding errors", () => {
  it('names the byte Go names: a bad character, missing or misplaced padding, trailing data; newlines skipped and counted', () => {
    const cases: [string, number | undefined][] = [
      ['', undefined],
      ['YWJj\r\nYWJj', undefined],
      ['YQ==\n', undefined],
      ['Y', 0],
      ['YWJjY', 4],
      ['YW=j', 2],
      ['Y===', 1],
      ['YQ=\n', 4],
      ['YQ==\nx', 5],
      ['YWJ=YWJj', 4],
      ['éé', 0],
    ];
    for (const [text, offset] of cases) expect(base64ErrorOffset(text), JSON.stringify(text)).to.equal(offset);
  });
});
