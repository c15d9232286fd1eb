import type { KubeConfig } from '@kubernetes/client-node';
import type { Observable } from 'rxjs';
import type { KubeClient, KubeObject, Logger, ManifestOptions } from 'rxkube';

/**
 * One API of this project: a custom resource and its controller, as
 * src/main.ts runs them and src/rbac.test.ts checks them. Each kind's
 * folder exports one (`src/<kind>/controller.ts`); src/apis.ts lists them,
 * and `npx rxkube create api <Kind>` adds to that list.
 */
export interface Api {
  /** The kind, as messages name it. */
  kind: string;
  /** Its CustomResourceDefinition. */
  crd: KubeObject;
  /** What `npx rxkube manifests dist/<kind>/controller.js` prints: the CRD, the ServiceAccount, its RBAC, the Deployment. */
  manifests(options: ManifestOptions): KubeObject[];
  /** The controller with `kubeConfig`'s credentials, in `namespace` (every namespace when undefined): it runs while subscribed. */
  controller(kubeConfig: KubeConfig, namespace?: string, logger?: Logger): Observable<unknown>;
  /** The controller as a process runs it: logs, and a graceful stop on SIGINT or SIGTERM. */
  run(kubeConfig: KubeConfig): Promise<{ stop(): void; readonly done: Promise<void> }>;
  /** Creates a sample object in `namespace` and waits until it converges; returns what its status says. */
  converge(client: KubeClient, namespace: string): Promise<string>;
}
