import { expect } from 'chai';
import fc from 'fast-check';
import type { KubeObject } from 'rxkube';
import { admissionReview, callAdmission } from 'rxkube/testing';
import { mutatingWebhook } from 'rxkube/webhooks';
import { canonicalJson, expectOrdinaryPrototypes, expectPrototypesUnchanged, hostileJsonText, prototypeSnapshot } from '../support/hostileJson.js';

/**
 * A mutating handler's answer is the JSON patch from the request's object
 * to the handler's: with members named `__proto__`, `constructor` or
 * `prototype` anywhere in either, the patch (applied as kube-apiserver
 * applies it, here by `callAdmission`) must still turn one into the other.
 */
describe('mutating webhook patches over members named __proto__, constructor, prototype', () => {
  it('patch the request object into exactly the handler object, and change no prototype (property)', async () => {
    const before = prototypeSnapshot();
    const object = (text: string): KubeObject => ({ ...(JSON.parse(text) as object), apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'default' } });
    await fc.assert(
      fc.asyncProperty(hostileJsonText, hostileJsonText, async (fromText, toText) => {
        const from = object(fromText);
        const to = object(toText);
        let seen: KubeObject | undefined;
        const webhook = mutatingWebhook((draft) => {
          seen = draft;
          return JSON.parse(JSON.stringify(to)) as KubeObject;
        });
        const result = await callAdmission(webhook, admissionReview('UPDATE', from));
        expect(JSON.stringify(seen)).to.equal(JSON.stringify(from));
        expectOrdinaryPrototypes(seen);
        expect(canonicalJson(result.patched)).to.equal(canonicalJson(to));
        expectOrdinaryPrototypes(result.patched);
      }),
      { numRuns: 200 },
    );
    expectPrototypesUnchanged(before);
  });
});
