import type { KubeObject } from '../types.js';

/**
 * The wire shapes of `admission.k8s.io/v1` `AdmissionReview` and
 * `apiextensions.k8s.io/v1` `ConversionReview`, as kube-apiserver sends
 * them to a webhook and reads its answer.
 */

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface AdmissionUserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** What the API server asks a webhook about: one operation on one object. */
export interface AdmissionRequest<T extends KubeObject = KubeObject> {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  requestKind?: GroupVersionKind;
  requestResource?: GroupVersionResource;
  requestSubResource?: string;
  name?: string;
  namespace?: string;
  operation: AdmissionOperation;
  userInfo: AdmissionUserInfo;
  /** The object as it would be stored; null for DELETE. */
  object?: T | null;
  /** The live object, for UPDATE and DELETE; null for CREATE. */
  oldObject?: T | null;
  dryRun?: boolean;
  options?: Record<string, unknown> | null;
}

/** The `status` of a denial: a `metav1.Status` in part. */
export interface AdmissionStatus {
  code?: number;
  message?: string;
  reason?: string;
  status?: 'Success' | 'Failure';
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionStatus;
  /** Base64 of an RFC 6902 JSON patch, with `patchType: 'JSONPatch'`. */
  patch?: string;
  patchType?: 'JSONPatch';
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

export interface AdmissionReview<T extends KubeObject = KubeObject> {
  apiVersion: 'admission.k8s.io/v1';
  kind: 'AdmissionReview';
  request?: AdmissionRequest<T>;
  response?: AdmissionResponse;
}

export interface ConversionRequest {
  uid: string;
  /** The `apiVersion` every object is to be converted to, `group/version`. */
  desiredAPIVersion: string;
  objects: KubeObject[];
}

export interface ConversionResponse {
  uid: string;
  convertedObjects: KubeObject[];
  result: { status: 'Success' | 'Failure'; message?: string; code?: number; reason?: string };
}

export interface ConversionReview {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'ConversionReview';
  request?: ConversionRequest;
  response?: ConversionResponse;
}
