import { builtin } from '../api/builtinResources.js';
import type { ResourceType } from '../api/resourceType.js';

/** The admissionregistration.k8s.io/v1 kinds that register webhooks with the server: plain stored objects, read on every write. */
export function admissionResources(): ResourceType[] {
  return [
    builtin({ group: 'admissionregistration.k8s.io', version: 'v1', resource: 'validatingwebhookconfigurations', kind: 'ValidatingWebhookConfiguration', namespaced: false, categories: ['api-extensions'] }),
    builtin({ group: 'admissionregistration.k8s.io', version: 'v1', resource: 'mutatingwebhookconfigurations', kind: 'MutatingWebhookConfiguration', namespaced: false, categories: ['api-extensions'] }),
  ];
}
