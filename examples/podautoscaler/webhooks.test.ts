import { expect } from 'chai';
import { admissionReview, callAdmission, callConversion, conversionReview, expectAdmission } from 'rxkube/testing';
import { conversionWebhook, mutatingWebhook, validatingWebhook } from 'rxkube/webhooks';
import { autoscalerManifest } from './manifests.js';
import { GROUP, KIND } from './types.js';
import { podAutoscalerWebhooks } from './webhooks.js';

const hooks = podAutoscalerWebhooks();
const pa = (spec: Record<string, number>) => {
  const base = autoscalerManifest('default', 'web', 'web', 3);
  return { ...base, spec: { ...base.spec, ...spec } };
};

describe('the podautoscaler webhooks', () => {
  it('default spec.minReplicas to 1 and leave a given one alone', async () => {
    const defaulter = mutatingWebhook(hooks.default as never);
    expectAdmission(await callAdmission(defaulter, admissionReview('CREATE', pa({}))), { allowed: true, patched: pa({ minReplicas: 1 }) });
    expect((await callAdmission(defaulter, admissionReview('CREATE', pa({ minReplicas: 2 })))).patch).to.deep.equal([]);
  });

  it('deny a minReplicas above maxReplicas, on create and on update', async () => {
    const validator = validatingWebhook(hooks.validate as never);
    const message = 'spec.minReplicas (5) must be at most spec.maxReplicas (2)';
    expectAdmission(await callAdmission(validator, admissionReview('CREATE', pa({ minReplicas: 5, maxReplicas: 2 }))), { allowed: false, code: 422, message });
    expectAdmission(await callAdmission(validator, admissionReview('UPDATE', pa({ minReplicas: 5, maxReplicas: 2 }), { oldObject: pa({}) })), { allowed: false, message });
    expectAdmission(await callAdmission(validator, admissionReview('CREATE', pa({ minReplicas: 2, maxReplicas: 2 }))), { allowed: true });
  });

  it('convert v1 to v2 and back without losing a field', async () => {
    const converter = conversionWebhook([{ ...(hooks.convert as NonNullable<typeof hooks.convert>), group: GROUP, kind: KIND }]);
    const v1 = pa({ minReplicas: 1, maxReplicas: 4 });
    const up = await callConversion(converter, conversionReview(`${GROUP}/v2`, [v1]));
    expect(up.convertedObjects[0]).to.deep.equal({
      ...v1,
      apiVersion: `${GROUP}/v2`,
      spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, replicas: 3, minReplicas: 1, maxReplicas: 4 },
    });
    const down = await callConversion(converter, conversionReview(`${GROUP}/v1`, up.convertedObjects));
    expect(down.convertedObjects[0]).to.deep.equal(v1);
  });
});
