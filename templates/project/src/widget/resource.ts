import type { Condition, KubeObject, WatchedResource } from 'rxkube';

/** The API group of this project's custom resources. */
export const GROUP = 'example.com';
/** The version of the Widget API (the CRD's only, storage, version). */
export const VERSION = 'v1';

/** A Widget: an image served by a Deployment of `replicas` pods behind a Service on `port`. */
export interface Widget extends KubeObject {
  spec: { image: string; replicas: number; port: number };
  status?: { observedGeneration?: number; availableReplicas?: number; conditions?: Condition[] };
}

/** The built-in kind the controller reads back: only the fields it reads or sets. */
export interface Deployment extends KubeObject {
  spec?: { replicas?: number };
  status?: { availableReplicas?: number };
}

export const widgets: WatchedResource = { group: GROUP, version: VERSION, resource: 'widgets', kind: 'Widget' };
export const deployments: WatchedResource = { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' };
export const services: WatchedResource = { version: 'v1', resource: 'services', kind: 'Service' };

/** The CustomResourceDefinition: a structural schema with defaults and bounds, and a CEL rule the API server enforces. */
export const widgetCrd: KubeObject & { spec: object } = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `widgets.${GROUP}` },
  spec: {
    group: GROUP,
    names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
    scope: 'Namespaced',
    versions: [
      {
        name: VERSION,
        served: true,
        storage: true,
        subresources: { status: {} },
        additionalPrinterColumns: [
          { name: 'Image', type: 'string', jsonPath: '.spec.image' },
          { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['image'],
                properties: {
                  image: { type: 'string', minLength: 1 },
                  replicas: { type: 'integer', minimum: 0, maximum: 20, default: 1 },
                  port: { type: 'integer', minimum: 1, maximum: 65535, default: 8080 },
                },
                'x-kubernetes-validations': [{ rule: 'self.port != 22', message: 'port 22 is for SSH, not for a web server' }],
              },
              status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            },
          },
        },
      },
    ],
  },
};
