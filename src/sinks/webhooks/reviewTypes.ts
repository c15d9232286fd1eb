import type { KubeObject } from '../../types.js';

/**
 * The wire shapes of `admission.k8s.io/v1` `AdmissionReview` and
 * `apiextensions.k8s.io/v1` `ConversionReview`, as kube-apiserver sends
 * them to a webhook and reads its answer.
 */

/** Names an object's type: API group, version and kind, as kube spells them in a review. */
export interface GroupVersionKind {
  /** The API group; `''` for the core group (Pods, ConfigMaps, ...). */
  group: string;
  /** The API version within the group, such as `v1` or `v1beta1`. */
  version: string;
  /** The kind, singular and CamelCase, such as `Deployment`. */
  kind: string;
}

/** Names a REST resource: API group, version and the plural resource name in URLs. */
export interface GroupVersionResource {
  /** The API group; `''` for the core group. */
  group: string;
  /** The API version within the group, such as `v1`. */
  version: string;
  /** The lowercase plural used in request paths, such as `deployments`. */
  resource: string;
}

/** The kind of write being admitted; `CONNECT` covers exec, attach and port-forward style requests. */
export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

/** Who made the request being admitted, as the API server authenticated them. */
export interface AdmissionUserInfo {
  /** The user's name, e.g. `system:serviceaccount:ns:name` for a service account. */
  username?: string;
  /** A unique id of the user across time; absent when the authenticator gives none. */
  uid?: string;
  /** The groups the user belongs to, such as `system:authenticated`. */
  groups?: string[];
  /** Further attributes the authenticator supplied, each a list of values. */
  extra?: Record<string, string[]>;
}

/** What the API server asks a webhook about: one operation on one object. */
export interface AdmissionRequest<T extends KubeObject = KubeObject> {
  /** Identifies this review; the response must echo it back unchanged. */
  uid: string;
  /** The type of `object`/`oldObject`, in the version the webhook registered for. */
  kind: GroupVersionKind;
  /** The resource being written, in the version the webhook registered for. */
  resource: GroupVersionResource;
  /** The subresource written, such as `status` or `scale`; absent for the main resource. */
  subResource?: string;
  /** The type as the client originally sent it; differs from `kind` when the API server converted it for this webhook. */
  requestKind?: GroupVersionKind;
  /** The resource as the client originally addressed it, before any conversion for this webhook. */
  requestResource?: GroupVersionResource;
  /** The subresource as the client originally addressed it. */
  requestSubResource?: string;
  /** The object's name; absent on CREATE when the name is generated server-side (`generateName`). */
  name?: string;
  /** The object's namespace; absent for cluster-scoped resources. */
  namespace?: string;
  /** Which write this is. */
  operation: AdmissionOperation;
  /** The user who made the request. */
  userInfo: AdmissionUserInfo;
  /** The object as it would be stored; null for DELETE. */
  object?: T | null;
  /** The live object, for UPDATE and DELETE; null for CREATE. */
  oldObject?: T | null;
  /** True when the request will not be persisted: a webhook must then cause no side effects. */
  dryRun?: boolean;
  /** The operation's options object (`CreateOptions`, `UpdateOptions`, `DeleteOptions`), as sent; may be absent or null. */
  options?: Record<string, unknown> | null;
}

/** The `status` of a denial: a `metav1.Status` in part. */
export interface AdmissionStatus {
  /** The HTTP status the API server returns to the client for a denial, such as 403. */
  code?: number;
  /** A human-readable explanation, shown to the client whose request was denied. */
  message?: string;
  /** A machine-readable, CamelCase reason, such as `Forbidden`; may be empty. */
  reason?: string;
  /** Whether the operation succeeded; `Failure` for a denial. */
  status?: 'Success' | 'Failure';
}

/** A webhook's answer to an `AdmissionRequest`: allow or deny, and optionally a patch. */
export interface AdmissionResponse {
  /** The `uid` of the request being answered, copied unchanged. */
  uid: string;
  /** Whether the request may proceed. */
  allowed: boolean;
  /** Why the request was denied; the API server ignores it when `allowed` is true. */
  status?: AdmissionStatus;
  /** Base64 of an RFC 6902 JSON patch, with `patchType: 'JSONPatch'`. */
  patch?: string;
  /** The format of `patch`; required when `patch` is set. */
  patchType?: 'JSONPatch';
  /** Warnings the API server passes to the client (shown by kubectl), whether or not the request is allowed. */
  warnings?: string[];
  /** Keys and values the API server adds to the request's audit event, keys prefixed with the webhook's name. */
  auditAnnotations?: Record<string, string>;
}

/** The envelope of an admission call: the API server sends it with `request`, the webhook returns it with `response`. */
export interface AdmissionReview<T extends KubeObject = KubeObject> {
  /** Always `admission.k8s.io/v1`, in the request and in the answer. */
  apiVersion: 'admission.k8s.io/v1';
  /** Always `AdmissionReview`. */
  kind: 'AdmissionReview';
  /** Set in what the API server sends; absent in the webhook's answer. */
  request?: AdmissionRequest<T>;
  /** Set in the webhook's answer; absent in what the API server sends. */
  response?: AdmissionResponse;
}

/** What the API server asks a conversion webhook: convert these objects to one version. */
export interface ConversionRequest {
  /** Identifies this review; the response must echo it back unchanged. */
  uid: string;
  /** The `apiVersion` every object is to be converted to, `group/version`. */
  desiredAPIVersion: string;
  /** The objects to convert, possibly in different versions; each keeps its own `apiVersion`. */
  objects: KubeObject[];
}

/** A conversion webhook's answer to a `ConversionRequest`. */
export interface ConversionResponse {
  /** The `uid` of the request being answered, copied unchanged. */
  uid: string;
  /** The objects converted to `desiredAPIVersion`, in the order of `objects`; empty on failure. */
  convertedObjects: KubeObject[];
  /** `Success`, or `Failure` with a `message` saying why (the API server then fails the client's request). */
  result: { status: 'Success' | 'Failure'; message?: string; code?: number; reason?: string };
}

/** The envelope of a CRD conversion call: sent with `request`, answered with `response`. */
export interface ConversionReview {
  /** Always `apiextensions.k8s.io/v1`. */
  apiVersion: 'apiextensions.k8s.io/v1';
  /** Always `ConversionReview`. */
  kind: 'ConversionReview';
  /** Set in what the API server sends; absent in the webhook's answer. */
  request?: ConversionRequest;
  /** Set in the webhook's answer; absent in what the API server sends. */
  response?: ConversionResponse;
}
