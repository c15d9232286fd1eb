import type { CompiledSchema } from './crdSchema.js';

/**
 * What the server knows about one served group/version/resource: its names
 * for discovery, its scope, its subresources, and which storage it shares
 * with the other versions of the same resource.
 */

/** A column of `kubectl get` output, as a CRD's `additionalPrinterColumns` declares it. */
export interface PrinterColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

/** The scale subresource of a resource (Deployments; CRDs may declare one). */
export interface ScaleSubresource {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface ResourceType {
  group: string;
  version: string;
  /** The plural name used in URLs. */
  resource: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames: readonly string[];
  categories: readonly string[];
  verbs: readonly string[];
  /** Whether the resource has a `/status` subresource (which changes what the main endpoint may write). */
  status: boolean;
  scale?: ScaleSubresource;
  /** Built-in types take strategic merge patches and are decoded with defaults; custom resources are not. */
  builtin: boolean;
  /** Versions of one resource share their objects: the key of that shared storage. */
  storageKey: string;
  /** The fields that `fieldSelector` may name, besides metadata.name and metadata.namespace. */
  selectableFields: readonly string[];
  printerColumns?: readonly PrinterColumn[];
  /** A custom resource version's `openAPIV3Schema`: objects are pruned, defaulted and checked against it. */
  schema?: unknown;
  /** That schema compiled (keywords and CEL rules) once, when the CRD was served. */
  compiledSchema?: CompiledSchema;
  /** Extra subresources served for discovery only (e.g. namespaces/finalize). */
  extraSubresources?: readonly { name: string; kind: string; group?: string; version?: string; verbs: readonly string[] }[];
}

export const allVerbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'] as const;

export function apiVersionOf(type: { group: string; version: string }): string {
  return type.group === '' ? type.version : `${type.group}/${type.version}`;
}

export function describeRef(ref: { group: string; version: string; resource: string }): string {
  return ref.group === '' ? `${ref.version}/${ref.resource}` : `${ref.group}/${ref.version}/${ref.resource}`;
}
