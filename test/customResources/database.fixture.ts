import Type from 'typebox';
import { defineCustomResource, Kube } from 'rxkube';

/**
 * A representative custom resource, defined schema-first: every kind of
 * node and extension `defineCustomResource` maps (enums and defaults,
 * int-or-string, nullable, maps and map lists, sets, an embedded object,
 * preserved fields, exclusive bounds, CEL rules at a node and at the root),
 * printer columns, short names, categories, both subresources, a
 * selectable field, and two versions of which one is stored.
 */
export const Database = defineCustomResource({
  group: 'db.example.com',
  kind: 'Database',
  shortNames: ['db'],
  categories: ['all'],
  scope: 'Namespaced',
  versions: {
    v1: {
      storage: true,
      schema: {
        spec: Type.Object(
          {
            engine: Type.Union([Type.Literal('postgres'), Type.Literal('mysql')], { default: 'postgres' }),
            replicas: Type.Integer({ format: 'int32', minimum: 1, maximum: 5, default: 1 }),
            storage: Kube.intOrString({ description: 'Bytes, or a quantity (10Gi).' }),
            version: Type.Optional(Type.Union([Type.String(), Type.Null()])),
            parameters: Type.Optional(Type.Record(Type.String(), Type.String(), Kube.mapType('granular'))),
            users: Type.Optional(Type.Array(Type.Object({ name: Type.String(), role: Type.String() }), { ...Kube.listMap('name'), maxItems: 10 })),
            tags: Type.Optional(Type.Array(Type.String(), Kube.listType('set'))),
            podTemplate: Type.Optional(Kube.embeddedObject()),
            extra: Type.Optional(Type.Object({ known: Type.Optional(Type.Boolean()) }, Kube.preserveUnknownFields())),
            weight: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
            anything: Type.Optional(Kube.unknown()),
          },
          Kube.rules(
            { rule: 'self.replicas <= 3 || self.engine == "postgres"', message: 'only postgres runs more than 3 replicas', fieldPath: '.replicas', reason: 'FieldValueForbidden' },
            { rule: 'self.engine == oldSelf.engine', messageExpression: '"engine cannot change from " + oldSelf.engine' },
          ),
        ),
        status: Type.Object({
          phase: Type.Optional(Type.String()),
          replicas: Type.Optional(Type.Integer()),
          selector: Type.Optional(Type.String()),
          conditions: Type.Optional(Kube.conditions()),
        }),
      },
      rules: [{ rule: 'self.metadata.name.size() <= 30', message: 'a database name has at most 30 characters' }],
      printerColumns: [
        { name: 'Engine', type: 'string', jsonPath: '.spec.engine' },
        { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
        { name: 'Phase', type: 'string', jsonPath: '.status.phase', priority: 1 },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
      scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
      selectableFields: ['.spec.engine'],
    },
    v1beta1: {
      deprecated: true,
      deprecationWarning: 'db.example.com/v1beta1 Database is deprecated; use v1',
      schema: { spec: Type.Object({ engine: Type.String() }) },
    },
  },
});

/** The CRD the definition above must give, written by hand from kube's apiextensions.k8s.io/v1 reference. */
export const expectedDatabaseCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'databases.db.example.com' },
  spec: {
    group: 'db.example.com',
    names: { plural: 'databases', singular: 'database', kind: 'Database', listKind: 'DatabaseList', shortNames: ['db'], categories: ['all'] },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            required: ['spec'],
            'x-kubernetes-validations': [{ rule: 'self.metadata.name.size() <= 30', message: 'a database name has at most 30 characters' }],
            properties: {
              spec: {
                type: 'object',
                required: ['engine', 'replicas', 'storage'],
                'x-kubernetes-validations': [
                  { rule: 'self.replicas <= 3 || self.engine == "postgres"', message: 'only postgres runs more than 3 replicas', fieldPath: '.replicas', reason: 'FieldValueForbidden' },
                  { rule: 'self.engine == oldSelf.engine', messageExpression: '"engine cannot change from " + oldSelf.engine' },
                ],
                properties: {
                  engine: { type: 'string', enum: ['postgres', 'mysql'], default: 'postgres' },
                  replicas: { type: 'integer', format: 'int32', minimum: 1, maximum: 5, default: 1 },
                  storage: { description: 'Bytes, or a quantity (10Gi).', 'x-kubernetes-int-or-string': true },
                  version: { type: 'string', nullable: true },
                  parameters: { type: 'object', 'x-kubernetes-map-type': 'granular', additionalProperties: { type: 'string' } },
                  users: {
                    type: 'array',
                    'x-kubernetes-list-type': 'map',
                    'x-kubernetes-list-map-keys': ['name'],
                    maxItems: 10,
                    items: { type: 'object', required: ['name', 'role'], properties: { name: { type: 'string' }, role: { type: 'string' } } },
                  },
                  tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
                  podTemplate: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
                  extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'boolean' } } },
                  weight: { type: 'number', minimum: 0, exclusiveMinimum: true },
                  anything: { 'x-kubernetes-preserve-unknown-fields': true },
                },
              },
              status: {
                type: 'object',
                properties: {
                  phase: { type: 'string' },
                  replicas: { type: 'integer' },
                  selector: { type: 'string' },
                  conditions: {
                    type: 'array',
                    'x-kubernetes-list-type': 'map',
                    'x-kubernetes-list-map-keys': ['type'],
                    items: {
                      type: 'object',
                      required: ['type', 'status'],
                      properties: {
                        type: { type: 'string', minLength: 1, maxLength: 316 },
                        status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
                        reason: { type: 'string', maxLength: 1024 },
                        message: { type: 'string', maxLength: 32768 },
                        observedGeneration: { type: 'integer', format: 'int64', minimum: 0 },
                        lastTransitionTime: { type: 'string', format: 'date-time' },
                      },
                    },
                  },
                },
              },
            },
          },
        },
        subresources: { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' } },
        additionalPrinterColumns: [
          { name: 'Engine', type: 'string', jsonPath: '.spec.engine' },
          { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
          { name: 'Phase', type: 'string', jsonPath: '.status.phase', priority: 1 },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
        selectableFields: [{ jsonPath: '.spec.engine' }],
      },
      {
        name: 'v1beta1',
        served: true,
        storage: false,
        deprecated: true,
        deprecationWarning: 'db.example.com/v1beta1 Database is deprecated; use v1',
        schema: {
          openAPIV3Schema: {
            type: 'object',
            required: ['spec'],
            properties: { spec: { type: 'object', required: ['engine'], properties: { engine: { type: 'string' } } } },
          },
        },
      },
    ],
  },
};
