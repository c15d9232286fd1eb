/**
 * The CRD of the CRD-validation tests: one kind (`Gadget`) whose schema
 * uses every keyword structural schemas allow, and CEL rules of every kind
 * kube supports (messages, messageExpression, reason, fieldPath, transition
 * rules, optionalOldSelf, the Kubernetes libraries).
 */

export const gadgets = { group: 'example.com', version: 'v1', plural: 'gadgets', namespace: 'default' } as const;

const format = (name: string): Record<string, unknown> => ({ type: 'string', format: name });

export function gadgetSchema(): Record<string, unknown> {
  return {
    type: 'object',
    'x-kubernetes-validations': [{ rule: "self.metadata.name.startsWith('g')", message: 'gadget names start with g' }],
    properties: {
      spec: {
        type: 'object',
        required: ['size'],
        'x-kubernetes-validations': [
          { rule: 'self.replicas <= self.maxReplicas', message: 'replicas must not exceed maxReplicas' },
          {
            rule: 'self.minReplicas <= self.replicas',
            // Not `'replicas ' + string(self.replicas)`: kube estimates a string() of unknown length, and refuses the CRD.
            messageExpression: "'replicas %d is below minReplicas %d'.format([self.replicas, self.minReplicas])",
          },
          { rule: "!has(self.secretRef) || self.secretRef.startsWith('secret-')", message: 'must name a secret', reason: 'FieldValueForbidden', fieldPath: '.secretRef' },
          { rule: 'self.size >= oldSelf.size', message: 'size may not shrink', reason: 'FieldValueInvalid' },
        ],
        properties: {
          size: { type: 'integer', minimum: 1, maximum: 10 },
          replicas: { type: 'integer', default: 1 },
          minReplicas: { type: 'integer', default: 1 },
          maxReplicas: { type: 'integer', default: 5 },
          ratio: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true },
          step: { type: 'integer', multipleOf: 5 },
          name: { type: 'string', minLength: 2, maxLength: 8, pattern: '^[a-z]+$' },
          mode: { type: 'string', enum: ['fast', 'safe'] },
          tags: { type: 'array', minItems: 1, maxItems: 3, items: { type: 'string' } },
          labels: { type: 'object', minProperties: 1, maxProperties: 2, additionalProperties: { type: 'string' } },
          note: { type: 'string', nullable: true },
          port: { 'x-kubernetes-int-or-string': true },
          aliases: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
          endpoints: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name'],
            items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
          },
          extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          email: format('email'),
          uid: format('uuid'),
          host: format('hostname'),
          address: format('ipv4'),
          address6: format('ipv6'),
          network: format('cidr'),
          hardware: format('mac'),
          since: format('date-time'),
          day: format('date'),
          timeout: format('duration'),
          blob: format('byte'),
          site: format('uri'),
          count: { type: 'integer', format: 'int32' },
          secretRef: { type: 'string' },
          immutable: { type: 'string', 'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'immutable is immutable' }] },
          counter: {
            type: 'integer',
            'x-kubernetes-validations': [
              { rule: 'oldSelf.hasValue() ? self >= oldSelf.value() : self <= 100', message: 'counter starts at most at 100 and only grows', optionalOldSelf: true },
            ],
          },
          sorted: { type: 'array', items: { type: 'integer' }, 'x-kubernetes-validations': [{ rule: 'self.isSorted() && self.sum() < 100', message: 'sorted, summing under 100' }] },
          memory: { type: 'string', 'x-kubernetes-validations': [{ rule: "isQuantity(self) && quantity(self).isLessThan(quantity('1Gi'))", message: 'under 1Gi' }] },
          homepage: { type: 'string', 'x-kubernetes-validations': [{ rule: "isURL(self) && url(self).getScheme() == 'https'", message: 'an https URL' }] },
        },
      },
      status: {
        type: 'object',
        properties: {
          phase: { type: 'string', enum: ['Pending', 'Ready'] },
          readyReplicas: { type: 'integer', minimum: 0 },
        },
        'x-kubernetes-validations': [{ rule: "self.phase != 'Ready' || self.readyReplicas > 0", message: 'Ready needs a ready replica' }],
      },
    },
  };
}

export function gadgetCrd(schema: Record<string, unknown> = gadgetSchema(), name = 'gadgets'): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${name}.example.com` },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { plural: name, singular: name.replace(/s$/, ''), kind: name === 'gadgets' ? 'Gadget' : 'Other', listKind: name === 'gadgets' ? 'GadgetList' : 'OtherList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: [
            { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
            { name: 'Mode', type: 'string', jsonPath: '.spec.mode' },
          ],
          schema: { openAPIV3Schema: schema },
        },
      ],
    },
  };
}

export function gadget(name: string, spec: Record<string, unknown> = {}): Record<string, unknown> {
  return { apiVersion: 'example.com/v1', kind: 'Gadget', metadata: { name }, spec: { size: 3, ...spec } };
}
