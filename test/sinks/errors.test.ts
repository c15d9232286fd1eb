import { expect } from 'chai';
import { isAlreadyExists, isConflict, isForbidden, isGone, isInvalid, isNotFound, isTooManyRequests, KubeApiError } from 'rxkube';
import { ConflictRetriesExhaustedError, errorFromResponse, isResourceExpired, isUnauthorized, parseRetryAfter } from '../../src/sinks/client/errors.js';

const get = { verb: 'get', resource: 'configmaps', name: 'settings', namespace: 'prod' };

function status(code: number, reason: string, message = 'm', details?: object): string {
  return JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message, details });
}

describe('API errors', () => {
  it('carry the Status code, reason, message and details, and say what was being done', () => {
    const err = errorFromResponse(get, 404, status(404, 'NotFound', 'configmaps "settings" not found', { name: 'settings', kind: 'configmaps' }));
    expect(err).to.be.instanceOf(KubeApiError);
    expect(err.code).to.equal(404);
    expect(err.reason).to.equal('NotFound');
    expect(err.serverMessage).to.equal('configmaps "settings" not found');
    expect(err.details).to.deep.equal({ name: 'settings', kind: 'configmaps' });
    expect(err.request).to.deep.equal(get);
    expect(err.message).to.equal('get configmaps "prod/settings": configmaps "settings" not found (404 NotFound)');
  });

  it('describe a subresource, a cluster-scoped object and a request without a name', () => {
    const status404 = status(404, 'NotFound');
    expect(errorFromResponse({ verb: 'update', resource: 'apps.example.com', name: 'a', namespace: 'n', subresource: 'status' }, 404, status404).message)
      .to.match(/^update apps.example.com\/status "n\/a": /);
    expect(errorFromResponse({ verb: 'delete', resource: 'namespaces', name: 'prod' }, 404, status404).message).to.match(/^delete namespaces "prod": /);
    expect(errorFromResponse({ verb: 'create', resource: 'configmaps', namespace: 'prod' }, 404, status404).message).to.match(
      /^create configmaps in namespace "prod": /,
    );
  });

  it('read a body that is not a Status as text, and an empty body as such', () => {
    const err = errorFromResponse(get, 502, '<html>bad gateway</html>');
    expect(err.reason).to.equal('Unknown');
    expect(err.message).to.equal('get configmaps "prod/settings": the server responded with HTTP 502: <html>bad gateway</html> (502 Unknown)');
    expect(errorFromResponse(get, 500, '').serverMessage).to.equal('the server responded with HTTP 500 and no body');
  });

  it('take Retry-After from the header, else from Status details', () => {
    expect(errorFromResponse(get, 429, status(429, 'TooManyRequests', 'slow down', { retryAfterSeconds: 3 }), '7').retryAfterSeconds).to.equal(7);
    expect(errorFromResponse(get, 429, status(429, 'TooManyRequests', 'slow down', { retryAfterSeconds: 3 })).retryAfterSeconds).to.equal(3);
    expect(parseRetryAfter(' 2 ')).to.equal(2);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT')).to.equal(undefined);
    expect(parseRetryAfter('-1')).to.equal(undefined);
    expect(parseRetryAfter(undefined)).to.equal(undefined);
  });

  it('are classified by reason first, by code only when the reason is not one kube defines', () => {
    const e = (code: number, reason: string) => errorFromResponse(get, code, status(code, reason));
    expect(isNotFound(e(404, 'NotFound'))).to.equal(true);
    expect(isNotFound(e(404, 'SomethingElse'))).to.equal(true);
    expect(isConflict(e(409, 'Conflict'))).to.equal(true);
    expect(isConflict(e(409, 'AlreadyExists'))).to.equal(false);
    expect(isAlreadyExists(e(409, 'AlreadyExists'))).to.equal(true);
    expect(isAlreadyExists(e(409, 'Conflict'))).to.equal(false);
    expect(isGone(e(410, 'Expired'))).to.equal(true);
    expect(isGone(e(410, 'Gone'))).to.equal(true);
    expect(isResourceExpired(e(410, 'Expired'))).to.equal(true);
    expect(isResourceExpired(e(410, 'Gone'))).to.equal(false);
    expect(isTooManyRequests(e(429, 'TooManyRequests'))).to.equal(true);
    expect(isForbidden(e(403, 'Forbidden'))).to.equal(true);
    expect(isInvalid(e(422, 'Invalid'))).to.equal(true);
    expect(isUnauthorized(e(401, 'Unauthorized'))).to.equal(true);
    expect(isForbidden(e(404, 'NotFound'))).to.equal(false);
    expect(isNotFound(new Error('404 NotFound'))).to.equal(false);
    expect(isNotFound(undefined)).to.equal(false);
  });

  it('say when conflict retries ran out, and still count as a conflict', () => {
    const last = errorFromResponse({ verb: 'update', resource: 'configmaps', name: 's', namespace: 'p' }, 409, status(409, 'Conflict', 'the object has been modified'));
    const err = new ConflictRetriesExhaustedError(last.request, 5, last);
    expect(err.message).to.equal(
      'update configmaps "p/s": gave up after 5 attempts, each re-reading the object after a 409 Conflict; last conflict: the object has been modified (409 Conflict)',
    );
    expect(err.cause).to.equal(last);
    expect(err.attempts).to.equal(5);
    expect(err.name).to.equal('ConflictRetriesExhaustedError');
    expect(isConflict(err)).to.equal(true);
  });

  it('are recognized when another copy of rxkube in the process made them, by instanceof and by every predicate', async () => {
    // A query makes the module loader evaluate the file again: a second copy, as a graph loaded by require beside one loaded by import has.
    const other = (await import(new URL('../../src/sinks/client/errors.ts?second-copy', import.meta.url).href)) as typeof import('../../src/sinks/client/errors.js');
    expect(other.KubeApiError).to.not.equal(KubeApiError);
    const notFound = other.errorFromResponse(get, 404, status(404, 'NotFound'));
    expect(notFound).to.be.instanceOf(KubeApiError);
    expect(isNotFound(notFound)).to.equal(true);
    expect(isConflict(other.errorFromResponse(get, 409, status(409, 'Conflict')))).to.equal(true);
    expect(isForbidden(other.errorFromResponse(get, 403, status(403, 'Forbidden')))).to.equal(true);
    expect(isNotFound(new Error('configmaps "settings" not found'))).to.equal(false);
    expect({ reason: 'NotFound', code: 404 }).to.not.be.instanceOf(KubeApiError);
    // A subclass is checked as classes are: a plain KubeApiError is not a ConflictRetriesExhaustedError.
    expect(notFound).to.not.be.instanceOf(ConflictRetriesExhaustedError);
    expect(new ConflictRetriesExhaustedError(get, 2, notFound)).to.be.instanceOf(ConflictRetriesExhaustedError).and.instanceOf(other.KubeApiError);
  });
});
