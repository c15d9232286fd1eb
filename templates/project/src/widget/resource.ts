import Type from 'typebox';
import { defineCustomResource, Kube, type KubeObject, type ObjectOf, type WatchedResource } from 'rxkube';

/** The API group of this project's custom resources. */
export const GROUP = 'example.com';

/**
 * The Widget custom resource, defined once: an image served by a
 * Deployment of `replicas` pods behind a Service on `port`. Its
 * CustomResourceDefinition (a structural schema with defaults and bounds,
 * a CEL rule the API server enforces, printer columns, the status
 * subresource), the type of its objects and the resource the controller
 * watches all come from this one definition.
 */
export const Widget = defineCustomResource({
  group: GROUP,
  kind: 'Widget',
  plural: 'widgets',
  scope: 'Namespaced',
  versions: {
    v1: {
      schema: {
        spec: Type.Object(
          {
            image: Type.String({ minLength: 1 }),
            replicas: Type.Integer({ minimum: 0, maximum: 20, default: 1 }),
            port: Type.Integer({ minimum: 1, maximum: 65535, default: 8080 }),
          },
          Kube.rules({ rule: 'self.port != 22', message: 'port 22 is for SSH, not for a web server' }),
        ),
        status: Type.Object({
          observedGeneration: Type.Optional(Type.Integer()),
          availableReplicas: Type.Optional(Type.Integer()),
          conditions: Type.Optional(Kube.conditions()),
        }),
      },
      printerColumns: [
        { name: 'Image', type: 'string', jsonPath: '.spec.image' },
        { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    },
  },
});

/** A Widget object, as the API server serves it: `spec` and `status` typed by the schemas above. */
export type Widget = ObjectOf<typeof Widget>;

/** The built-in kind the controller reads back: only the fields it reads or sets. */
export interface Deployment extends KubeObject {
  spec?: { replicas?: number };
  status?: { availableReplicas?: number };
}

export const widgets = Widget.resource;
export const deployments: WatchedResource = { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment' };
export const services: WatchedResource = { version: 'v1', resource: 'services', kind: 'Service' };
