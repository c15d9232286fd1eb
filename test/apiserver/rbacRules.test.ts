import { expect } from 'chai';
import { ruleAllows, type PolicyRule } from '../../src/apiserver/auth/policyRule.js';
import { nonResourceAttributes, requestAttributes, type RequestAttributes } from '../../src/apiserver/auth/requestAttributes.js';
import { parseRoute } from '../../src/apiserver/http/router.js';
import { ServiceAccountTokens } from '../../src/apiserver/auth/serviceAccountTokens.js';

// Expected results follow kube's RBAC rule matching (plugin/pkg/auth/authorizer/rbac) and its RequestInfo.

function attrs(method: string, path: string, verb: string): RequestAttributes {
  const url = new URL(path, 'https://x');
  return requestAttributes(parseRoute(url.pathname), verb, method, url.pathname, url.searchParams);
}

const get = (resource: string, extra: Partial<RequestAttributes> = {}): RequestAttributes => ({
  verb: 'get',
  resourceRequest: true,
  apiGroup: '',
  apiVersion: 'v1',
  resource,
  subresource: '',
  namespace: 'ns',
  name: 'a',
  path: '',
  ...extra,
});

describe('RBAC rule matching', () => {
  it('matches verbs, groups and resources exactly or by *', () => {
    const rule: PolicyRule = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };
    expect(ruleAllows(rule, get('pods'))).to.equal(true);
    expect(ruleAllows(rule, get('pods', { verb: 'list' }))).to.equal(false);
    expect(ruleAllows(rule, get('pods', { apiGroup: 'apps' }))).to.equal(false);
    expect(ruleAllows(rule, get('services'))).to.equal(false);
    expect(ruleAllows({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, get('deployments', { apiGroup: 'apps', subresource: 'scale' }))).to.equal(true);
  });

  it('names a subresource as resource/subresource or */subresource, never by the resource alone', () => {
    expect(ruleAllows({ verbs: ['get'], apiGroups: [''], resources: ['pods'] }, get('pods', { subresource: 'status' }))).to.equal(false);
    expect(ruleAllows({ verbs: ['get'], apiGroups: [''], resources: ['pods/status'] }, get('pods', { subresource: 'status' }))).to.equal(true);
    expect(ruleAllows({ verbs: ['get'], apiGroups: [''], resources: ['pods/status'] }, get('pods'))).to.equal(false);
    expect(ruleAllows({ verbs: ['get'], apiGroups: [''], resources: ['*/status'] }, get('pods', { subresource: 'status' }))).to.equal(true);
    expect(ruleAllows({ verbs: ['get'], apiGroups: [''], resources: ['pods/*'] }, get('pods', { subresource: 'status' }))).to.equal(false);
  });

  it('limits by resourceNames, which no request without a name meets', () => {
    const rule: PolicyRule = { verbs: ['get', 'list', 'create'], apiGroups: [''], resources: ['configmaps'], resourceNames: ['a'] };
    expect(ruleAllows(rule, get('configmaps'))).to.equal(true);
    expect(ruleAllows(rule, get('configmaps', { name: 'b' }))).to.equal(false);
    expect(ruleAllows(rule, get('configmaps', { verb: 'create', name: '' }))).to.equal(false);
    expect(ruleAllows({ ...rule, resourceNames: [] }, get('configmaps', { verb: 'create', name: '' }))).to.equal(true);
  });

  it('matches non-resource URLs exactly, by a trailing *, or by *', () => {
    const rule: PolicyRule = { verbs: ['get'], nonResourceURLs: ['/healthz', '/apis/*'] };
    expect(ruleAllows(rule, nonResourceAttributes('get', '/healthz'))).to.equal(true);
    expect(ruleAllows(rule, nonResourceAttributes('get', '/healthz/etcd'))).to.equal(false);
    expect(ruleAllows(rule, nonResourceAttributes('get', '/apis/apps/v1'))).to.equal(true);
    expect(ruleAllows(rule, nonResourceAttributes('post', '/healthz'))).to.equal(false);
    expect(ruleAllows({ verbs: ['*'], nonResourceURLs: ['*'] }, nonResourceAttributes('delete', '/anything'))).to.equal(true);
    // A resource rule never allows a path, nor a URL rule a resource.
    expect(ruleAllows({ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }, nonResourceAttributes('get', '/healthz'))).to.equal(false);
    expect(ruleAllows({ verbs: ['*'], nonResourceURLs: ['*'] }, get('pods'))).to.equal(false);
  });
});

describe('request attributes', () => {
  it('reads a resource request as kube RequestInfo does', () => {
    expect(attrs('GET', '/apis/apps/v1/namespaces/ns/deployments/web/scale', 'get')).to.deep.include({
      resourceRequest: true,
      apiGroup: 'apps',
      resource: 'deployments',
      subresource: 'scale',
      namespace: 'ns',
      name: 'web',
    });
    expect(attrs('GET', '/api/v1/pods', 'list')).to.deep.include({ namespace: '', name: '', resource: 'pods' });
  });

  it('takes the name of a list or watch from fieldSelector=metadata.name', () => {
    expect(attrs('GET', '/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Da', 'list').name).to.equal('a');
    expect(attrs('GET', '/api/v1/namespaces/ns/configmaps?watch=1&fieldSelector=metadata.name%3D%3Db,x%3Dy', 'watch').name).to.equal('b');
    expect(attrs('DELETE', '/api/v1/namespaces/ns/configmaps?fieldSelector=metadata.name%3Da', 'deletecollection').name).to.equal('');
  });

  it('puts a Namespace in its own namespace, so a RoleBinding can grant it', () => {
    expect(attrs('GET', '/api/v1/namespaces/team', 'get')).to.deep.include({ resource: 'namespaces', name: 'team', namespace: 'team' });
    expect(attrs('PUT', '/api/v1/namespaces/team/finalize', 'update')).to.deep.include({ subresource: 'finalize', namespace: 'team' });
    expect(attrs('GET', '/api/v1/namespaces?fieldSelector=metadata.name%3Dteam', 'list')).to.deep.include({ name: 'team', namespace: '' });
  });

  it('reads discovery, version, health and unknown paths as non-resource requests with the lowercased method', () => {
    for (const path of ['/api', '/api/v1', '/apis', '/apis/apps', '/apis/apps/v1', '/version', '/healthz', '/metrics', '/openapi/v3']) {
      expect(attrs('GET', path, 'discovery'), path).to.deep.include({ resourceRequest: false, verb: 'get', path });
    }
    expect(attrs('HEAD', '/healthz', 'health').verb).to.equal('head');
  });
});

describe('ServiceAccount tokens', () => {
  const account = { namespace: 'ns', name: 'bot', uid: 'u1' };

  it('verifies what it issued until it expires, for the API audience only', () => {
    const tokens = new ServiceAccountTokens();
    const t0 = Date.UTC(2026, 0, 1);
    const { token } = tokens.issue(account, ['https://kubernetes.default.svc.cluster.local'], 600, t0);
    expect(tokens.verify(token, t0 + 599_000)).to.deep.include(account);
    expect(tokens.verify(token, t0 + 600_000)).to.equal(undefined);
    expect(tokens.verify(token, t0 - 1000)).to.equal(undefined);
    expect(tokens.verify(tokens.issue(account, ['vault'], 600, t0).token, t0)).to.equal(undefined);
  });

  it('takes no token another server signed, nor one changed', () => {
    const t0 = Date.UTC(2026, 0, 1);
    const mine = new ServiceAccountTokens();
    const theirs = new ServiceAccountTokens();
    const { token } = theirs.issue(account, ['https://kubernetes.default.svc.cluster.local'], 600, t0);
    expect(mine.verify(token, t0)).to.equal(undefined);
    const [header, payload, signature] = mine.issue(account, ['https://kubernetes.default.svc.cluster.local'], 600, t0).token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString()) as { 'kubernetes.io': { serviceaccount: { name: string } } };
    claims['kubernetes.io'].serviceaccount.name = 'admin';
    expect(mine.verify(`${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.${signature}`, t0)).to.equal(undefined);
    expect(mine.verify('a.b', t0)).to.equal(undefined);
  });
});
