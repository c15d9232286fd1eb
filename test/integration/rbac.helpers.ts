import { request } from 'node:https';
import { AppsV1Api, AuthenticationV1Api, AuthorizationV1Api, CoreV1Api, RbacAuthorizationV1Api, type KubeConfig, type V1PolicyRule } from '@kubernetes/client-node';
import type { AccessSubject, ApiServer } from 'rxkube/testing';

/** Helpers of the RBAC integration tests: clients per subject, RBAC objects, raw HTTPS requests. */

export interface SubjectClients {
  kc: KubeConfig;
  core: CoreV1Api;
  apps: AppsV1Api;
  rbac: RbacAuthorizationV1Api;
  authz: AuthorizationV1Api;
  authn: AuthenticationV1Api;
}

export function clientsOf(kc: KubeConfig): SubjectClients {
  return {
    kc,
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    rbac: kc.makeApiClient(RbacAuthorizationV1Api),
    authz: kc.makeApiClient(AuthorizationV1Api),
    authn: kc.makeApiClient(AuthenticationV1Api),
  };
}

export function clientsFor(server: ApiServer, subject: AccessSubject): SubjectClients {
  return clientsOf(server.kubeConfigFor(subject));
}

export const serviceAccount = (namespace: string, name: string): { kind: string; name: string; namespace: string } => ({ kind: 'ServiceAccount', name, namespace });

export async function role(admin: SubjectClients, namespace: string, name: string, rules: V1PolicyRule[]): Promise<void> {
  await admin.rbac.createNamespacedRole({ namespace, body: { metadata: { name }, rules } });
}

export async function roleBinding(
  admin: SubjectClients,
  namespace: string,
  name: string,
  roleRef: { kind: 'Role' | 'ClusterRole'; name: string },
  subjects: { kind: string; name: string; namespace?: string }[],
): Promise<void> {
  await admin.rbac.createNamespacedRoleBinding({
    namespace,
    body: { metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...roleRef }, subjects: subjects.map((s) => ({ ...s, ...(s.kind === 'ServiceAccount' ? {} : { apiGroup: 'rbac.authorization.k8s.io' }) })) },
  });
}

export interface HttpsResponse {
  status: number;
  text: string;
  json: () => Record<string, unknown>;
}

/** One HTTPS request with node:https (the server's certificate is self-signed), for what client-node cannot send. */
export function https(server: { readonly url: string }, method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<HttpsResponse> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { method, headers: { ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...headers }, rejectUnauthorized: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, text, json: () => JSON.parse(text) as Record<string, unknown> });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body !== undefined) req.write(JSON.stringify(body));
    req.end();
  });
}

/** The bearer token of a KubeConfig's current user. */
export function tokenOf(kc: KubeConfig): string {
  const token = kc.getCurrentUser()?.token;
  if (token === undefined) throw new Error('the kubeconfig has no token');
  return token;
}
