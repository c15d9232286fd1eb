/**
 * rxkube/webhooks: admission and conversion webhooks.
 *
 * Where to start: `startWebhookServer` serves, over HTTPS, the endpoints
 * `validatingWebhook`, `mutatingWebhook` and `conversionWebhook` build;
 * `selfSignedCertificates` makes a CA and a serving certificate for
 * development, with the `caBundle` the webhook configurations carry. The
 * embedded API server (`rxkube/apiserver`) calls them as kube-apiserver does;
 * `rxkube/testing` builds reviews and calls handlers directly.
 *
 * Every name below is exported on purpose (see `api/rxkube-webhooks.api.md`).
 */

export { allow, deny, mutatingWebhook, patchResponse, validatingWebhook } from './admission.js';
export type { AdmissionVerdict, AdmissionWebhook, MutateHandler, ValidateHandler } from './admission.js';
export { conversionWebhook, type ConversionDefinition, type ConversionSpoke, type ConversionWebhook, type ConvertFunction } from './conversion.js';
export { readCertificateFiles, selfSignedCertificates } from './certificates.js';
export type { CertificateFiles, SelfSignedCertificates, SelfSignedOptions, ServingCertificate } from './certificates.js';
export { maxReviewBytes, startWebhookServer, type WebhookHandler, type WebhookServer, type WebhookServerOptions } from './webhookServer.js';
export { MalformedReviewError } from './reviewParsing.js';
export { webhookPaths } from './webhookPaths.js';
export type {
  AdmissionOperation,
  AdmissionRequest,
  AdmissionResponse,
  AdmissionReview,
  AdmissionStatus,
  AdmissionUserInfo,
  ConversionRequest,
  ConversionResponse,
  ConversionReview,
  GroupVersionKind,
  GroupVersionResource,
} from './reviewTypes.js';
