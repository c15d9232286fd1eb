import { isPlainObject } from '../../util/json.js';
import { type Plain, unset } from './fields.js';

/**
 * SetDefaults_Service of kube 1.32 (pkg/apis/core/v1/defaults.go): session affinity, type,
 * ports' protocol and target port, traffic policies, `allocateLoadBalancerNodePorts`, and the
 * `status.loadBalancer` struct kube always writes. What the registry allocates (cluster IPs,
 * IP families, node ports) is serviceAllocator.ts.
 */


/** kube's `service.ExternallyAccessible`: NodePort, LoadBalancer, or ClusterIP with external IPs. */
function externallyAccessible(spec: Plain): boolean {
  return spec.type === 'LoadBalancer' || spec.type === 'NodePort' || (spec.type === 'ClusterIP' && Array.isArray(spec.externalIPs) && spec.externalIPs.length > 0);
}

export function defaultService(obj: Plain): void {
  const spec = obj.spec;
  if (isPlainObject(spec) && !Object.isFrozen(spec)) defaultServiceSpec(spec);
  if (obj.status === undefined || obj.status === null) obj.status = { loadBalancer: {} };
  const status = obj.status;
  if (!isPlainObject(spec) || spec.type !== 'LoadBalancer' || !isPlainObject(status) || Object.isFrozen(status)) return;
  const ingress = isPlainObject(status.loadBalancer) ? status.loadBalancer.ingress : undefined;
  if (!Array.isArray(ingress)) return;
  for (const entry of ingress) if (isPlainObject(entry) && !unset(entry.ip) && unset(entry.ipMode)) entry.ipMode = 'VIP';
}

function defaultServiceSpec(spec: Plain): void {
  if (unset(spec.sessionAffinity)) spec.sessionAffinity = 'None';
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
  if (spec.sessionAffinity === 'ClientIP') {
    const config = spec.sessionAffinityConfig;
    const clientIP = isPlainObject(config) ? config.clientIP : undefined;
    if (!isPlainObject(clientIP) || unset(clientIP.timeoutSeconds)) spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: 10800 } };
  }
  if (unset(spec.type)) spec.type = 'ClusterIP';
  if (Array.isArray(spec.ports)) {
    for (const port of spec.ports) {
      if (!isPlainObject(port)) continue;
      if (unset(port.protocol)) port.protocol = 'TCP';
      if (unset(port.targetPort) || port.targetPort === 0) port.targetPort = port.port;
    }
  }
  if (externallyAccessible(spec) && unset(spec.externalTrafficPolicy)) spec.externalTrafficPolicy = 'Cluster';
  if (unset(spec.internalTrafficPolicy) && (spec.type === 'NodePort' || spec.type === 'LoadBalancer' || spec.type === 'ClusterIP')) {
    spec.internalTrafficPolicy = 'Cluster';
  }
  if (spec.type === 'LoadBalancer' && unset(spec.allocateLoadBalancerNodePorts)) spec.allocateLoadBalancerNodePorts = true;
}
