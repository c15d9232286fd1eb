import Type from 'typebox';
import { defineCustomResource, Kube, type KubeObject, type ObjectOf, type WatchedResource } from 'rxkube';
import { deployments as allDeployments, type Deployment } from 'rxkube/kinds';

export const GROUP = 'autoscaling.rxkube.dev';
export const API_VERSION = `${GROUP}/v1`;
export const KIND = 'PodAutoscaler';

const replicas = (description: string) => Type.Integer({ format: 'int32', minimum: 0, description });
const minReplicas = Type.Optional(replicas('The fewest replicas anyone should ask for; the defaulting webhook sets 1.'));
const maxReplicas = Type.Optional(replicas('The most replicas anyone should ask for; the validating webhook keeps minReplicas at most this.'));
const status = Type.Object({
  observedGeneration: Type.Optional(Type.Integer({ format: 'int64', description: 'The metadata.generation the controller last acted on.' })),
  currentReplicas: Type.Optional(Type.Integer({ format: 'int32', description: 'The replicas the target Deployment is set to, as last seen by the controller.' })),
  conditions: Type.Optional(Kube.conditions()),
});

/**
 * PodAutoscaler: sets the replicas of a Deployment in its namespace. v1 is
 * stored (and the conversion webhook's hub); v2 names its target as an HPA
 * does (`scaleTargetRef`), served through the conversion webhook
 * (webhooks.ts). The CRD, the object types and the resource the controller
 * is `for` all come from this one definition.
 */
export const PodAutoscaler = defineCustomResource({
  group: GROUP,
  kind: KIND,
  shortNames: ['pas'],
  scope: 'Namespaced',
  versions: {
    v1: {
      storage: true,
      schema: {
        spec: Type.Object({
          targetDeployment: Type.String({ minLength: 1, maxLength: 253, description: "The name of the Deployment to scale, in the PodAutoscaler's namespace." }),
          replicas: replicas('The replicas the Deployment should have.'),
          minReplicas,
          maxReplicas,
        }),
        status,
      },
      printerColumns: [
        { name: 'Target', type: 'string', jsonPath: '.spec.targetDeployment' },
        { name: 'Desired', type: 'integer', jsonPath: '.spec.replicas' },
        { name: 'Current', type: 'integer', jsonPath: '.status.currentReplicas' },
        { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    },
    v2: {
      schema: {
        spec: Type.Object({
          scaleTargetRef: Type.Object({ apiVersion: Type.Literal('apps/v1'), kind: Type.Literal('Deployment'), name: Type.String({ minLength: 1 }) }),
          replicas: replicas('The replicas the Deployment should have.'),
          minReplicas,
          maxReplicas,
        }),
        status,
      },
    },
  },
});

/** A PodAutoscaler (v1, the storage version): this many replicas on that Deployment of its namespace. */
export type PodAutoscaler = ObjectOf<typeof PodAutoscaler>;
/** A PodAutoscaler at v2: the target as a reference, the replicas as before. */
export type PodAutoscalerV2 = ObjectOf<typeof PodAutoscaler, 'v2'>;
export type PodAutoscalerSpec = PodAutoscaler['spec'];
export type PodAutoscalerStatus = NonNullable<PodAutoscaler['status']>;

/** Kept on every PodAutoscaler this controller has acted on, until its cleanup has run. */
export const FINALIZER = `${GROUP}/finalizer`;

/**
 * Set on a Deployment while a PodAutoscaler drives its replicas, to the
 * PodAutoscaler's name: the one thing this controller adds to an object it
 * did not create, and removes again when it lets go (retarget, delete).
 */
export const SCALED_BY = `${GROUP}/scaled-by`;

/** The index on the PodAutoscaler store: `namespace/deployment` of each one's target. */
export const BY_TARGET = 'targetDeployment';

/** The index on the Deployment store: `namespace/podautoscaler` of the one that stamped it. */
export const BY_SCALER = 'scaledBy';

export function byTarget(pa: PodAutoscaler): readonly string[] {
  const target = pa.spec?.targetDeployment;
  return typeof target === 'string' && target !== '' ? [`${pa.metadata.namespace ?? ''}/${target}`] : [];
}

export function byScaler(deployment: KubeObject): readonly string[] {
  const scaler = deployment.metadata.annotations?.[SCALED_BY];
  return typeof scaler === 'string' && scaler !== '' ? [`${deployment.metadata.namespace ?? ''}/${scaler}`] : [];
}

/** The PodAutoscalers, in one namespace or all of them. */
export function podAutoscalers(namespace?: string): WatchedResource<PodAutoscaler> {
  return {
    ...PodAutoscaler.resource,
    indexers: { [BY_TARGET]: byTarget },
    ...(namespace !== undefined ? { namespace } : {}),
  };
}

/** The Deployments, in one namespace or all of them, indexed by the autoscaler that stamped them. */
export function deployments(namespace?: string): WatchedResource<Deployment> {
  return {
    ...allDeployments,
    indexers: { [BY_SCALER]: byScaler },
    ...(namespace !== undefined ? { namespace } : {}),
  };
}

/** Store names in `ctx.stores` (`resource.group`). */
export const PODAUTOSCALERS_STORE = `podautoscalers.${GROUP}`;
export const DEPLOYMENTS_STORE = 'deployments.apps';
