import type { Condition, KubeObject, WatchedResource } from 'rxkube';

/** What a PodAutoscaler asks for: this many replicas on that Deployment of its namespace. */
export interface PodAutoscalerSpec {
  targetDeployment: string;
  replicas: number;
  /** Set to 1 by the defaulting webhook when left out. */
  minReplicas?: number;
  /** The validating webhook refuses a minReplicas above it. */
  maxReplicas?: number;
}

export interface PodAutoscalerStatus {
  /** The `metadata.generation` the controller last acted on. */
  observedGeneration?: number;
  /** The replicas the target Deployment is set to, as the controller last saw it. */
  currentReplicas?: number;
  conditions?: Condition[];
}

export interface PodAutoscaler extends KubeObject {
  spec: PodAutoscalerSpec;
  status?: PodAutoscalerStatus;
}

/** The part of an apps/v1 Deployment this controller reads. */
export interface Deployment extends KubeObject {
  spec?: { replicas?: number; [field: string]: unknown };
}

export const GROUP = 'autoscaling.rxkube.dev';
export const API_VERSION = `${GROUP}/v1`;
export const KIND = 'PodAutoscaler';

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
export function podAutoscalers(namespace?: string): WatchedResource {
  return {
    group: GROUP,
    version: 'v1',
    resource: 'podautoscalers',
    kind: KIND,
    indexers: { [BY_TARGET]: byTarget as (o: KubeObject) => readonly string[] },
    ...(namespace !== undefined ? { namespace } : {}),
  };
}

export function deployments(namespace?: string): WatchedResource {
  return {
    group: 'apps',
    version: 'v1',
    resource: 'deployments',
    kind: 'Deployment',
    indexers: { [BY_SCALER]: byScaler },
    ...(namespace !== undefined ? { namespace } : {}),
  };
}

/** Store names in `ctx.stores` (`resource.group`). */
export const PODAUTOSCALERS_STORE = `podautoscalers.${GROUP}`;
export const DEPLOYMENTS_STORE = 'deployments.apps';
