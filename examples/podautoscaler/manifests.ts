import type { ObjectRef, Typed } from 'rxkube';
import type { Deployment } from 'rxkube/kinds';
import { API_VERSION, KIND, type PodAutoscaler } from './types.js';

/** A minimal valid apps/v1 Deployment running one container, for tests and the demo. */
export function deploymentManifest(namespace: string, name: string, replicas: number): Deployment {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, labels },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: { metadata: { labels }, spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] } },
    },
  };
}

export function autoscalerManifest(namespace: string, name: string, targetDeployment: string, replicas: number): PodAutoscaler {
  return { apiVersion: API_VERSION, kind: KIND, metadata: { name, namespace }, spec: { targetDeployment, replicas } };
}

/** A reference the client can address without holding the object; typed, so that what the client reads through it is a `PodAutoscaler`. */
export const autoscalerRef = (namespace: string, name: string): ObjectRef & Typed<PodAutoscaler> => ({ apiVersion: API_VERSION, kind: KIND, name, namespace });
export const deploymentRef = (namespace: string, name: string): ObjectRef & Typed<Deployment> => ({ apiVersion: 'apps/v1', kind: 'Deployment', name, namespace });
