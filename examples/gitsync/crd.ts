import { installCrd, type CrdWaitOptions, type CustomResourceDefinitionObject, type KubeClient } from 'rxkube';
import { Application } from './types.js';

/** The Application CustomResourceDefinition, made from its definition in `types.ts` (`rxkube manifests` prints it). */
export function applicationCrd(): CustomResourceDefinitionObject {
  return Application.crd;
}

/** Applies the CRD (server-side apply, idempotent) and waits until the API server reports it `Established`. */
export async function installApplicationCrd(client: KubeClient, options: CrdWaitOptions = {}): Promise<void> {
  await installCrd(client, Application, options);
}
