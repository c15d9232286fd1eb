import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';

/**
 * The kubeconfig that points kubectl and client-node at the embedded server.
 * The server speaks plain HTTP, or HTTPS with a self-signed certificate
 * (with RBAC); client-node 1.4 refuses `http://` servers unless TLS
 * verification is marked skipped, so the cluster entry says so (kubectl
 * ignores the flag for plain HTTP, and trusts the certificate with it).
 */

const name = 'rxkube';

export function kubeconfigDocument(url: string, token: string | undefined, namespace = 'default'): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster: { server: url, 'insecure-skip-tls-verify': true } }],
    users: [{ name, user: token === undefined ? {} : { token } }],
    contexts: [{ name, context: { cluster: name, user: name, namespace } }],
    'current-context': name,
    preferences: {},
  };
}

/** `namespace` is the context's (a ServiceAccount's own, as in a Pod). */
export function kubeconfigYaml(url: string, token: string | undefined, namespace?: string): string {
  return stringify(kubeconfigDocument(url, token, namespace));
}

export function makeKubeConfig(url: string, token: string | undefined, namespace = 'default'): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name, server: url, skipTLSVerify: true }],
    users: [token === undefined ? { name } : { name, token }],
    contexts: [{ name, cluster: name, user: name, namespace }],
    currentContext: name,
  });
  return kc;
}
