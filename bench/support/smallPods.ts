import { pod } from './pods.js';

type Plain = Record<string, unknown>;

/**
 * Pods of about 2 KB of JSON (the size issue 12 measured with): the pods of
 * `pods.ts` (3.8 KB) with one managedFields entry, no probes, mounts or
 * volumes, and one condition.
 */
export function smallPod(i: number, resourceVersion: number): Plain {
  const full = pod(i, resourceVersion) as Plain & { metadata: Plain & { managedFields: Plain[] }; spec: Plain & { containers: Plain[] }; status: Plain & { conditions: unknown[] } };
  const managed = full.metadata.managedFields[0] as Plain & { fieldsV1: Plain };
  full.metadata.managedFields = [{ ...managed, fieldsV1: { 'f:metadata': managed.fieldsV1['f:metadata'] } }];
  const container = full.spec.containers[0] as Plain;
  for (const field of ['readinessProbe', 'volumeMounts', 'terminationMessagePath', 'terminationMessagePolicy', 'imagePullPolicy']) delete container[field];
  for (const field of ['volumes', 'dnsPolicy', 'schedulerName', 'priority', 'terminationGracePeriodSeconds']) delete full.spec[field];
  full.status.conditions = full.status.conditions.slice(1, 2);
  return full;
}
