/**
 * A CRD made of the schema shapes other generators get wrong (see
 * kubernetes-fluent-client's issues on int-or-string, enums, nested arrays,
 * maps and property names): the unit tests read its generated text, and the
 * corpus test compiles it with objects that must and must not type-check.
 */

const shapes = {
  type: 'object',
  description: 'The shapes. A comment that tries to end early */ and\n@returns a tag at the start of a line.',
  required: ['name'],
  properties: {
    name: { type: 'string' },
    port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
    quantity: { 'x-kubernetes-int-or-string': true, pattern: '^[0-9]+$' },
    mode: { type: 'string', enum: ['Fast', 'it\'s "quoted"', 'back\\slash', 'new\nline', '*/'] },
    level: { type: 'integer', enum: [1, 2, -3] },
    flag: { type: 'boolean', enum: [true] },
    maybe: { type: 'string', nullable: true, enum: ['A', null] },
    count: { type: 'integer', format: 'int64', nullable: true },
    matrix: { type: 'array', items: { type: 'array', items: { type: 'object', required: ['x'], properties: { x: { type: 'number' }, tags: { type: 'array', items: { type: 'string' } } } } } },
    ports: { type: 'array', items: { 'x-kubernetes-int-or-string': true } },
    byName: { type: 'object', additionalProperties: { type: 'object', properties: { weight: { type: 'integer' } } } },
    anything: { type: 'object', additionalProperties: true },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    raw: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    value: { 'x-kubernetes-preserve-unknown-fields': true },
    partly: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'string' } } },
    template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
    empty: { type: 'object' },
    default: { type: 'string', description: 'A reserved word as a name.' },
    class: { type: 'string' },
    constructor: { type: 'integer' },
    toString: { type: 'boolean' },
    ['__proto__']: { type: 'string' },
    'x-dashed': { type: 'string' },
    'with space': { type: 'string' },
    '9lives': { type: 'string' },
    'a.b': { type: 'object', properties: { c: { type: 'string' } } },
    aB: { type: 'object', properties: { d: { type: 'string' } } },
  },
};

/** Three versions: v1 and v2 served (v2 the storage one), v0 no longer served. */
export const shapesCrd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.shapes.example.com' },
  spec: {
    group: 'shapes.example.com',
    scope: 'Namespaced',
    names: { kind: 'Widget', plural: 'widgets', singular: 'widget', listKind: 'WidgetList' },
    versions: [
      { name: 'v0', served: false, storage: false, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object' } } } } },
      {
        name: 'v1',
        served: true,
        storage: false,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            description: 'A widget, to test the shapes.',
            required: ['spec'],
            properties: {
              apiVersion: { type: 'string' },
              kind: { type: 'string' },
              metadata: { type: 'object' },
              spec: shapes,
              status: { type: 'object', properties: { resource: { type: 'object', properties: { ready: { type: 'boolean' } } }, phase: { type: 'string' } } },
              resource: { type: 'object', properties: { id: { type: 'string' } } },
            },
          },
        },
      },
      { name: 'v2', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } } } },
    ],
  },
};
