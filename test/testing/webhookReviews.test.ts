import { expect } from 'chai';
import { admissionReview, callAdmission, callConversion, conversionReview, expectAdmission } from 'rxkube/testing';
import { allow, conversionWebhook, deny, mutatingWebhook, validatingWebhook } from 'rxkube/webhooks';

const pa = { apiVersion: 'autoscaling.rxkube.dev/v1', kind: 'PodAutoscaler', metadata: { name: 'web', namespace: 'default' }, spec: { maxReplicas: 3 } };

describe('the webhook test helpers', () => {
  it('build the AdmissionReview the API server sends for an operation', () => {
    const review = admissionReview('UPDATE', pa, { oldObject: pa, uid: 'u', dryRun: true });
    expect(review.request).to.deep.include({
      uid: 'u',
      kind: { group: 'autoscaling.rxkube.dev', version: 'v1', kind: 'PodAutoscaler' },
      resource: { group: 'autoscaling.rxkube.dev', version: 'v1', resource: 'podautoscalers' },
      name: 'web',
      namespace: 'default',
      operation: 'UPDATE',
      object: pa,
      oldObject: pa,
      dryRun: true,
    });
    const deletion = admissionReview('DELETE', pa).request;
    expect([deletion?.object, deletion?.oldObject]).to.deep.equal([null, pa]);
  });

  it('call a mutating handler and apply its patch to the request object', async () => {
    const defaulter = mutatingWebhook<typeof pa & { spec: { minReplicas?: number } }>((object) => {
      object.spec.minReplicas ??= 1;
    });
    const result = await callAdmission(defaulter, admissionReview('CREATE', pa));
    expect(result.patch).to.deep.equal([{ op: 'add', path: '/spec/minReplicas', value: 1 }]);
    const defaulted = { ...pa, spec: { maxReplicas: 3, minReplicas: 1 } };
    expectAdmission(result, { allowed: true, patched: defaulted });
  });

  it('say what differs when an answer is not the expected one', async () => {
    const validator = validatingWebhook(() => deny('minReplicas must be at most maxReplicas'));
    const result = await callAdmission(validator, admissionReview('CREATE', pa));
    expectAdmission(result, { allowed: false, code: 403, message: 'at most maxReplicas' });
    expect(() => expectAdmission(result, { allowed: true })).to.throw('allowed is false, expected true (minReplicas must be at most maxReplicas)');
    const allowed = await callAdmission(validatingWebhook(() => allow(['deprecated'])), admissionReview('CREATE', pa));
    expect(() => expectAdmission(allowed, { warnings: [] })).to.throw('warnings are ["deprecated"], expected []');
  });

  it('reject when a handler throws, naming its error', async () => {
    const failing = validatingWebhook(() => {
      throw new Error('boom');
    });
    let error: unknown;
    await callAdmission(failing, admissionReview('CREATE', pa)).catch((e: unknown) => (error = e));
    expect(String(error)).to.include('boom');
  });

  it('reject naming what a handler returned that is no verdict', async () => {
    const broken = validatingWebhook(() => 42 as never);
    let error: unknown;
    await callAdmission(broken, admissionReview('CREATE', pa)).catch((e: unknown) => (error = e));
    expect(String(error)).to.include('the validating handler returned 42, not allow() or deny()');
  });

  it('call a conversion handler with the ConversionReview the API server sends', async () => {
    const webhook = conversionWebhook([
      { group: 'autoscaling.rxkube.dev', kind: 'PodAutoscaler', hub: 'v2', spokes: { v1: { toHub: (o) => ({ ...o, hub: true }) as never, fromHub: (o) => o } } },
    ]);
    const response = await callConversion(webhook, conversionReview('autoscaling.rxkube.dev/v2', [pa], 'c'));
    expect(response).to.deep.equal({ uid: 'c', result: { status: 'Success' }, convertedObjects: [{ ...pa, apiVersion: 'autoscaling.rxkube.dev/v2', hub: true }] });
  });
});
