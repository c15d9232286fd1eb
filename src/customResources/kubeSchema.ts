import Type, { type TSchema, type TUnsafe } from 'typebox';
import type { Condition } from '../sinks/objects/conditions.js';
import type { KubeObject } from '../types.js';

/**
 * Kubernetes' extensions of OpenAPI, as typed pieces of TypeBox schemas:
 * options to pass as a TypeBox builder's options (`Type.Object({...},
 * Kube.rules(...))`, `Type.Array(item, Kube.listMap('type'))`), and
 * builders for the values whose TypeScript type no plain JSON Schema gives
 * (int-or-string, an embedded object, a value kept as it is). What they
 * add is the CRD's own keyword, so the schema stays the CRD's schema.
 */

/**
 * One CEL rule of `x-kubernetes-validations`, checked by the API server on
 * every write (compiled when the CRD is written: see `checkCustomResource`
 * in rxkube/testing for the same check in a test run).
 */
export interface ValidationRule {
  /** A CEL expression that must be true; `self` is the value at this level, `oldSelf` the stored one on an update. */
  rule: string;
  /** The error message when it is false (no line breaks). */
  message?: string;
  /** A CEL expression giving the message (a string). */
  messageExpression?: string;
  /** The reason of the error: `FieldValueInvalid` (default), `FieldValueForbidden`, `FieldValueRequired` or `FieldValueDuplicate`. */
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  /** The field the error names, below this level (`.spec.replicas` style, from `self`). */
  fieldPath?: string;
  /** Run the rule on creates too, with `oldSelf` an optional (a transition rule that may see no old value). */
  optionalOldSelf?: boolean;
}

/** Kubernetes' keywords on a schema node, by their CRD names. */
export interface KubeExtensions {
  /** CEL rules the API server checks at this node. */
  'x-kubernetes-validations'?: ValidationRule[];
  /** Fields the schema does not name are kept, not pruned. */
  'x-kubernetes-preserve-unknown-fields'?: true;
  /** An integer or a string (a port's `targetPort`, a percentage). */
  'x-kubernetes-int-or-string'?: true;
  /** A whole Kubernetes object (its `apiVersion`, `kind` and `metadata` are validated as such). */
  'x-kubernetes-embedded-resource'?: true;
  /** How server-side apply merges the list: whole (`atomic`), as a set of scalars, or as a map keyed by `x-kubernetes-list-map-keys`. */
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  /** The fields that key a `map` list's items. */
  'x-kubernetes-list-map-keys'?: string[];
  /** How server-side apply merges the object: whole (`atomic`) or field by field. */
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
}

/** An embedded object (`x-kubernetes-embedded-resource`): a whole Kubernetes object, such as a Pod template's. */
export type EmbeddedObject = KubeObject & Record<string, unknown>;

/** The schema of the standard `conditions` list (metav1.Condition): a map list keyed by `type`. */
function conditionsSchema(): TUnsafe<Condition[]> {
  const condition = Type.Object({
    type: Type.String({ minLength: 1, maxLength: 316 }),
    status: Type.Union([Type.Literal('True'), Type.Literal('False'), Type.Literal('Unknown')]),
    reason: Type.Optional(Type.String({ maxLength: 1024 })),
    message: Type.Optional(Type.String({ maxLength: 32768 })),
    observedGeneration: Type.Optional(Type.Integer({ format: 'int64', minimum: 0 })),
    lastTransitionTime: Type.Optional(Type.String({ format: 'date-time' })),
  });
  return Type.Unsafe<Condition[]>(Type.Array(condition, { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'] }));
}

/** Builders of schemas and options for Kubernetes' extensions, to use beside TypeBox's `Type`. */
export const Kube = {
  /** Options: CEL rules the API server checks at this level (`x-kubernetes-validations`). */
  rules(...rules: ValidationRule[]): Pick<KubeExtensions, 'x-kubernetes-validations'> {
    return { 'x-kubernetes-validations': rules };
  },
  /** Options for an array: a list merged by server-side apply as a map keyed by `keys` (`x-kubernetes-list-type: map`). */
  listMap(...keys: [string, ...string[]]): Pick<KubeExtensions, 'x-kubernetes-list-type' | 'x-kubernetes-list-map-keys'> {
    return { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': keys };
  },
  /** Options for an array: `set` (unique scalars, merged by value) or `atomic` (replaced whole by server-side apply). */
  listType(type: 'atomic' | 'set'): Pick<KubeExtensions, 'x-kubernetes-list-type'> {
    return { 'x-kubernetes-list-type': type };
  },
  /** Options for an object: `atomic` (replaced whole by server-side apply) or `granular` (merged field by field, the default). */
  mapType(type: 'atomic' | 'granular'): Pick<KubeExtensions, 'x-kubernetes-map-type'> {
    return { 'x-kubernetes-map-type': type };
  },
  /** Options for an object: keep the fields the schema does not name instead of pruning them. */
  preserveUnknownFields(): Pick<KubeExtensions, 'x-kubernetes-preserve-unknown-fields'> {
    return { 'x-kubernetes-preserve-unknown-fields': true };
  },
  /** An integer or a string (`x-kubernetes-int-or-string`), as a port's `targetPort` or a `maxSurge` of `25%`. */
  intOrString(options: { description?: string; default?: number | string; 'x-kubernetes-validations'?: ValidationRule[] } = {}): TUnsafe<number | string> {
    return Type.Unsafe<number | string>({ ...options, 'x-kubernetes-int-or-string': true });
  },
  /** Any JSON value, kept as it is (`x-kubernetes-preserve-unknown-fields` without a type). */
  unknown(options: { description?: string } = {}): TUnsafe<unknown> {
    return Type.Unsafe<unknown>({ ...options, 'x-kubernetes-preserve-unknown-fields': true });
  },
  /** An object of any fields, kept as they are (`type: object` with `x-kubernetes-preserve-unknown-fields`). */
  freeForm(options: { description?: string } = {}): TUnsafe<Record<string, unknown>> {
    return Type.Unsafe<Record<string, unknown>>({ ...options, type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  },
  /**
   * A whole Kubernetes object (`x-kubernetes-embedded-resource`): the API server checks its
   * `apiVersion`, `kind` and `metadata`, and keeps its other fields.
   */
  embeddedObject(options: { description?: string } = {}): TUnsafe<EmbeddedObject> {
    return Type.Unsafe<EmbeddedObject>({ ...options, type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true });
  },
  /** The standard `status.conditions` list (metav1.Condition, typed as rxkube's `Condition`), keyed by `type`. */
  conditions(): TUnsafe<Condition[]> {
    return conditionsSchema();
  },
} as const;

/** Any TypeBox schema (re-exported so that a definition's types need no import of TypeBox's internals). */
export type { TSchema };
