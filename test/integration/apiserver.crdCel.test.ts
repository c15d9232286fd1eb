import { expect } from 'chai';
import { PatchStrategy, setHeaderOptions, type ApiextensionsV1Api, type CustomObjectsApi } from '@kubernetes/client-node';
import type { ApiServer } from 'rxkube/testing';
import { failure, json, modelCrd, startWithClients } from './apiserver.helpers.js';
import { gadget, gadgetCrd, gadgets, gadgetSchema } from './crdValidation.fixtures.js';

/**
 * CEL rules of `x-kubernetes-validations` through client-node: messages,
 * messageExpression, reason, fieldPath, transition rules with oldSelf,
 * optionalOldSelf, the Kubernetes libraries; every way of writing (create,
 * update, each patch type, apply, /status); CRDs whose rules do not compile.
 */

interface Cause {
  field: string;
  reason: string;
  message: string;
}

type Stored = Record<string, unknown> & { metadata: { resourceVersion?: string }; spec: Record<string, unknown> };

function causes(failed: { body: Record<string, unknown> }): Cause[] {
  return (failed.body.details as { causes: Cause[] }).causes;
}

describe('CRD validation: CEL rules (client-node)', function () {
  this.timeout(30_000);
  let server: ApiServer;
  let custom: CustomObjectsApi;
  let extensions: ApiextensionsV1Api;
  let serial = 0;

  before(async () => {
    ({ server, custom, extensions } = await startWithClients());
    await extensions.createCustomResourceDefinition({ body: modelCrd(gadgetCrd()) });
  });
  after(async () => {
    await server.close();
  });

  const fresh = (): string => `g${(serial += 1)}`;
  const create = async (name: string, spec: Record<string, unknown>): Promise<Stored> =>
    (await custom.createNamespacedCustomObject({ ...gadgets, body: gadget(name, spec) })) as Stored;
  const replace = async (current: Stored, spec: Record<string, unknown>): Promise<Stored> =>
    (await custom.replaceNamespacedCustomObject({ ...gadgets, name: (current.metadata as { name: string }).name, body: { ...current, spec: { ...current.spec, ...spec } } })) as Stored;
  const rejected = async (op: Promise<unknown>, cause: Cause): Promise<void> => {
    const failed = await failure(op);
    expect(failed.code).to.equal(422);
    expect(causes(failed)).to.deep.include(cause);
  };

  it('a rule with a message: the level it is on, "object" as the value, the message', async () => {
    await create(fresh(), { replicas: 5, maxReplicas: 5 });
    await rejected(create(fresh(), { replicas: 6, maxReplicas: 5 }), { field: 'spec', reason: 'FieldValueInvalid', message: 'Invalid value: "object": replicas must not exceed maxReplicas' });
  });

  it('messageExpression: the message is evaluated against the object', async () => {
    await create(fresh(), { replicas: 2, minReplicas: 2 });
    await rejected(create(fresh(), { replicas: 1, minReplicas: 2 }), { field: 'spec', reason: 'FieldValueInvalid', message: 'Invalid value: "object": replicas 1 is below minReplicas 2' });
  });

  it('reason and fieldPath: the error is a Forbidden on the field the rule names', async () => {
    await create(fresh(), { secretRef: 'secret-db' });
    await rejected(create(fresh(), { secretRef: 'db' }), { field: 'spec.secretRef', reason: 'FieldValueForbidden', message: 'Forbidden: must name a secret' });
  });

  it('a transition rule (oldSelf) is skipped on create and checked on update', async () => {
    const created = await create(fresh(), { size: 5 });
    await rejected(replace(created, { size: 3 }), { field: 'spec', reason: 'FieldValueInvalid', message: 'Invalid value: "object": size may not shrink' });
    const grown = await replace(created, { size: 6 });
    expect(grown.spec.size).to.equal(6);
  });

  it('a transition rule on a field is skipped while the stored object has no value there', async () => {
    const created = await create(fresh(), {});
    const set = await replace(created, { immutable: 'a' });
    await rejected(replace(set, { immutable: 'b' }), { field: 'spec.immutable', reason: 'FieldValueInvalid', message: 'Invalid value: "string": immutable is immutable' });
  });

  it('optionalOldSelf: the rule runs on create too, with oldSelf an optional that has no value', async () => {
    await rejected(create(fresh(), { counter: 200 }), { field: 'spec.counter', reason: 'FieldValueInvalid', message: 'Invalid value: "integer": counter starts at most at 100 and only grows' });
    const created = await create(fresh(), { counter: 5 });
    await rejected(replace(created, { counter: 3 }), { field: 'spec.counter', reason: 'FieldValueInvalid', message: 'Invalid value: "integer": counter starts at most at 100 and only grows' });
    expect((await replace(created, { counter: 7 })).spec.counter).to.equal(7);
  });

  it('Kubernetes library functions: lists (isSorted, sum), quantity, url', async () => {
    await create(fresh(), { sorted: [1, 2, 3], memory: '512Mi', homepage: 'https://example.com/a' });
    await rejected(create(fresh(), { sorted: [3, 1] }), { field: 'spec.sorted', reason: 'FieldValueInvalid', message: 'Invalid value: "array": sorted, summing under 100' });
    await rejected(create(fresh(), { memory: '2Gi' }), { field: 'spec.memory', reason: 'FieldValueInvalid', message: 'Invalid value: "string": under 1Gi' });
    await rejected(create(fresh(), { homepage: 'http://example.com' }), { field: 'spec.homepage', reason: 'FieldValueInvalid', message: 'Invalid value: "string": an https URL' });
  });

  it('a rule at the root of the schema sees metadata.name and reports on no field (<nil>)', async () => {
    await rejected(custom.createNamespacedCustomObject({ ...gadgets, body: gadget('x-gadget') }), {
      field: '<nil>',
      reason: 'FieldValueInvalid',
      message: 'Invalid value: "object": gadget names start with g',
    });
  });

  it('status: written through /status, checked by keywords and rules of the status schema', async () => {
    const created = await create(fresh(), {});
    const name = (created.metadata as { name: string }).name;
    await rejected(custom.replaceNamespacedCustomObjectStatus({ ...gadgets, name, body: { ...created, status: { phase: 'Done' } } }), {
      field: 'status.phase',
      reason: 'FieldValueNotSupported',
      message: 'Unsupported value: "Done": supported values: "Pending", "Ready"',
    });
    await rejected(custom.replaceNamespacedCustomObjectStatus({ ...gadgets, name, body: { ...created, status: { phase: 'Ready', readyReplicas: 0 } } }), {
      field: 'status',
      reason: 'FieldValueInvalid',
      message: 'Invalid value: "object": Ready needs a ready replica',
    });
    await rejected(
      custom.patchNamespacedCustomObjectStatus({ ...gadgets, name, body: { status: { readyReplicas: -1 } } }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch)),
      { field: 'status.readyReplicas', reason: 'FieldValueInvalid', message: 'Invalid value: -1: status.readyReplicas in body should be greater than or equal to 0' },
    );
    const ready = (await custom.replaceNamespacedCustomObjectStatus({ ...gadgets, name, body: { ...created, status: { phase: 'Ready', readyReplicas: 1 } } })) as { status: unknown };
    expect(ready.status).to.deep.equal({ phase: 'Ready', readyReplicas: 1 });
  });

  describe('every write path validates', () => {
    const sizeCause: Cause = { field: 'spec.size', reason: 'FieldValueInvalid', message: 'Invalid value: 0: spec.size in body should be greater than or equal to 1' };
    const shrinkCause: Cause = { field: 'spec', reason: 'FieldValueInvalid', message: 'Invalid value: "object": size may not shrink' };

    it('update (PUT)', async () => {
      await rejected(replace(await create(fresh(), {}), { size: 0 }), sizeCause);
    });

    it('JSON merge patch', async () => {
      const name = (await create(fresh(), { size: 4 })).metadata as { name: string };
      const patch = (body: unknown): Promise<unknown> => custom.patchNamespacedCustomObject({ ...gadgets, name: name.name, body }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch));
      await rejected(patch({ spec: { size: 0 } }), sizeCause);
      await rejected(patch({ spec: { size: 2 } }), shrinkCause);
    });

    it('JSON patch', async () => {
      const name = ((await create(fresh(), { size: 4 })).metadata as { name: string }).name;
      const patch = (body: unknown): Promise<unknown> => custom.patchNamespacedCustomObject({ ...gadgets, name, body }, setHeaderOptions('Content-Type', PatchStrategy.JsonPatch));
      await rejected(patch([{ op: 'replace', path: '/spec/size', value: 0 }]), sizeCause);
      await rejected(patch([{ op: 'replace', path: '/spec/size', value: 2 }]), shrinkCause);
    });

    it('server-side apply, creating and updating', async () => {
      const name = fresh();
      const apply = (spec: Record<string, unknown>): Promise<unknown> =>
        custom.patchNamespacedCustomObject({ ...gadgets, name, body: gadget(name, spec), fieldManager: 'test', force: true }, setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply));
      await rejected(apply({ size: 0 }), sizeCause);
      await apply({ size: 4 });
      await rejected(apply({ size: 2 }), shrinkCause);
    });

    it('a strategic merge patch is refused for custom resources, as kube does', async () => {
      const name = ((await create(fresh(), {})).metadata as { name: string }).name;
      const res = await json(server, 'PATCH', `/apis/example.com/v1/namespaces/default/gadgets/${name}`, { spec: { size: 0 } }, 'application/strategic-merge-patch+json');
      expect(res.status).to.equal(415);
    });
  });

  /** Runs `body` while the Gadget CRD has `schema`, then puts the fixture's schema back. */
  async function withSchema(schema: Record<string, unknown>, body: () => Promise<void>): Promise<void> {
    type Crd = Record<string, unknown> & { spec: { versions: { schema: unknown }[] } };
    const swap = async (openAPIV3Schema: Record<string, unknown>): Promise<void> => {
      const crd = (await extensions.readCustomResourceDefinition({ name: 'gadgets.example.com' })) as unknown as Crd;
      crd.spec.versions[0].schema = { openAPIV3Schema };
      await extensions.replaceCustomResourceDefinition({ name: 'gadgets.example.com', body: modelCrd(crd) });
    };
    await swap(schema);
    try {
      await body();
    } finally {
      await swap(gadgetSchema());
    }
  }

  it('ratcheting: an update that leaves an invalid stored value as it is passes; changing it to another invalid value fails', async () => {
    const name = fresh();
    await create(name, { name: 'abcdef' });
    const stricter = gadgetSchema() as { properties: { spec: { properties: { name: Record<string, unknown> } } } };
    stricter.properties.spec.properties.name = { type: 'string', maxLength: 3 };
    await withSchema(stricter as Record<string, unknown>, async () => {
      const stored = (await custom.getNamespacedCustomObject({ ...gadgets, name })) as Stored;
      const updated = await replace(stored, { size: 4 });
      expect(updated.spec).to.include({ size: 4, name: 'abcdef' });
      await rejected(replace(updated, { name: 'abcdefg' }), { field: 'spec.name', reason: 'FieldValueTooLong', message: 'Too long: may not be more than 3 bytes' });
      await rejected(create(fresh(), { name: 'abcd' }), { field: 'spec.name', reason: 'FieldValueTooLong', message: 'Too long: may not be more than 3 bytes' });
    });
  });

  it('ratcheting: a rule an unchanged stored value fails is a Warning header, not an error', async () => {
    const name = fresh();
    await create(name, { name: 'abc' });
    const stricter = gadgetSchema() as { properties: { spec: { properties: { name: Record<string, unknown> } } } };
    stricter.properties.spec.properties.name = { type: 'string', 'x-kubernetes-validations': [{ rule: "self.startsWith('z')", message: 'names start with z' }] };
    await withSchema(stricter as Record<string, unknown>, async () => {
      const stored = (await custom.getNamespacedCustomObject({ ...gadgets, name })) as Stored;
      const path = `/apis/example.com/v1/namespaces/default/gadgets/${name}`;
      const res = await json(server, 'PUT', path, { ...stored, spec: { ...stored.spec, size: 4 } });
      expect(res.status).to.equal(200);
      expect(res.headers.warning).to.equal('299 - "spec.name: Invalid value: \\"string\\": names start with z"');
      const changed = await json(server, 'PUT', path, { ...res.json(), spec: { ...stored.spec, size: 4, name: 'abd' } });
      expect(changed.status).to.equal(422);
      expect(changed.json().message).to.equal(`Gadget.example.com "${name}" is invalid: spec.name: Invalid value: "string": names start with z`);
    });
  });

  describe('a CRD whose rules kube would not accept', () => {
    const withRule = (rule: Record<string, unknown>): Record<string, unknown> => {
      const schema = gadgetSchema() as { properties: { spec: Record<string, unknown> } };
      schema.properties.spec['x-kubernetes-validations'] = [rule];
      return gadgetCrd(schema as Record<string, unknown>, 'others');
    };
    const refused = async (rule: Record<string, unknown>): Promise<{ message: string; causes: Cause[] }> => {
      const failed = await failure(extensions.createCustomResourceDefinition({ body: modelCrd(withRule(rule)) }));
      expect(failed.code).to.equal(422);
      expect(await json(server, 'GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/others.example.com').then((r) => r.status)).to.equal(404);
      return { message: String(failed.body.message), causes: causes(failed) };
    };
    const at = 'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0]';

    it('a rule with a syntax error, in kube\'s words', async () => {
      const { message, causes: found } = await refused({ rule: 'self.size >' });
      expect(message).to.match(
        new RegExp(
          `^CustomResourceDefinition\\.apiextensions\\.k8s\\.io "others\\.example\\.com" is invalid: ${at.replace(/[.[\]]/g, '\\$&')}\\.rule: ` +
            'Invalid value: apiextensions\\.ValidationRule\\{Rule:"self\\.size >", Message:"", MessageExpression:"", ' +
            'Reason:\\(\\*apiextensions\\.FieldValueErrorReason\\)\\(nil\\), FieldPath:"", OptionalOldSelf:\\(\\*bool\\)\\(nil\\)\\}: ' +
            'compilation failed: ERROR: <input>:1:\\d+: Syntax error: ',
        ),
      );
      expect(found[0]).to.include({ field: `${at}.rule`, reason: 'FieldValueInvalid' });
    });

    it('a rule naming a field the schema does not declare, or a function that does not exist', async () => {
      expect((await refused({ rule: 'self.nope > 1' })).message).to.contain("compilation failed: ERROR: <input>:1:5: undefined field 'nope'\n | self.nope > 1\n | ....^");
      expect((await refused({ rule: 'frobnicate(self.size)' })).message).to.contain("undeclared reference to 'frobnicate' (in container '')");
    });

    it('a rule that is no bool, a messageExpression that does not compile, a reason kube does not know', async () => {
      expect((await refused({ rule: 'self.size + 1' })).causes[0]?.message).to.match(/: cel expression must evaluate to a bool$/);
      expect((await refused({ rule: 'self.size > 1', messageExpression: 'self.size +' })).causes[0]).to.include({ field: `${at}.messageExpression`, reason: 'FieldValueInvalid' });
      expect((await refused({ rule: 'self.size > 1', reason: 'FieldValueWrong' })).causes[0]).to.deep.equal({
        field: `${at}.reason`,
        reason: 'FieldValueNotSupported',
        message: 'Unsupported value: "FieldValueWrong": supported values: "FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"',
      });
    });

    it('an empty rule, a fieldPath to no field, optionalOldSelf without oldSelf', async () => {
      expect((await refused({ rule: ' ' })).causes[0]).to.deep.equal({ field: `${at}.rule`, reason: 'FieldValueRequired', message: 'Required value: rule is not specified' });
      expect((await refused({ rule: 'self.size > 1', fieldPath: '.nope' })).causes[0]).to.deep.equal({ field: `${at}.fieldPath`, reason: 'FieldValueInvalid', message: 'Invalid value: ".nope": fieldPath must be a valid path' });
      expect((await refused({ rule: 'self.size > 1', optionalOldSelf: true })).causes[0]).to.deep.equal({
        field: `${at}.optionalOldSelf`,
        reason: 'FieldValueInvalid',
        message: 'Invalid value: true: may not be set if oldSelf is not used in rule',
      });
    });

    it('an update of a served CRD to a rule that does not compile is refused too, and the old rules stay', async () => {
      const crd = (await extensions.readCustomResourceDefinition({ name: 'gadgets.example.com' })) as unknown as Record<string, unknown>;
      const broken = withRule({ rule: 'self.size >' }) as { spec: { versions: unknown[] } };
      const body = { ...crd, spec: { ...(crd.spec as Record<string, unknown>), versions: broken.spec.versions } };
      const failed = await failure(extensions.replaceCustomResourceDefinition({ name: 'gadgets.example.com', body: modelCrd(body) }));
      expect(failed.code).to.equal(422);
      await rejected(create(fresh(), { replicas: 9, maxReplicas: 5 }), { field: 'spec', reason: 'FieldValueInvalid', message: 'Invalid value: "object": replicas must not exceed maxReplicas' });
    });
  });
});
