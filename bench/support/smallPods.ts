import { pod } from './pods.js';

type Plain = Record<string, unknown>;

/**
 * Pods of about 2 KB of JSON (the size issue 12 measured with): the pods of
 * `pods.ts` (3.8 KB) with one managedFields entry, no probes, mounts or
 * volumes, and one condition. With `owners` above 1, pod `i` belongs to
 * ReplicaSet `i % owners` (its name, pod-template-hash and uid, in the
 * labels, owner reference and managedFields), so the pods of several
 * ReplicaSets come in turn, as on a cluster; the JSON's size is the same.
 */
export function smallPod(i: number, resourceVersion: number, owners = 1): Plain {
  const one = oneOwnerPod(i, resourceVersion);
  const owner = i % owners;
  if (owner === 0) return one;
  // Same length as the first owner's: only the bytes tell the ReplicaSets apart.
  const hash = `7d4b9c${owner.toString(36).padStart(3, '0')}`;
  const uid = `0d6f4c1e-8a52-4a43-b0f6-${owner.toString(16).padStart(12, '0')}`;
  return JSON.parse(JSON.stringify(one).replaceAll('7d4b9c8f6', hash).replaceAll('0d6f4c1e-8a52-4a43-b0f6-3c1f2b7e9a10', uid)) as Plain;
}

function oneOwnerPod(i: number, resourceVersion: number): Plain {
  const full = pod(i, resourceVersion) as Plain & { metadata: Plain & { managedFields: Plain[] }; spec: Plain & { containers: Plain[] }; status: Plain & { conditions: unknown[] } };
  const managed = full.metadata.managedFields[0] as Plain & { fieldsV1: Plain };
  full.metadata.managedFields = [{ ...managed, fieldsV1: { 'f:metadata': managed.fieldsV1['f:metadata'] } }];
  const container = full.spec.containers[0] as Plain;
  for (const field of ['readinessProbe', 'volumeMounts', 'terminationMessagePath', 'terminationMessagePolicy', 'imagePullPolicy']) delete container[field];
  for (const field of ['volumes', 'dnsPolicy', 'schedulerName', 'priority', 'terminationGracePeriodSeconds']) delete full.spec[field];
  full.status.conditions = full.status.conditions.slice(1, 2);
  return full;
}
