import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { installCrd, type CrdWaitOptions, type KubeClient, type KubeObject } from 'rxkube';

const crdFile = new URL('./crd.yaml', import.meta.url);

/** The Application CustomResourceDefinition, as in `crd.yaml`. */
export function applicationCrd(): KubeObject {
  return parse(readFileSync(crdFile, 'utf8')) as KubeObject;
}

/** Applies the CRD (server-side apply, idempotent) and waits until the API server reports it `Established`. */
export async function installApplicationCrd(client: KubeClient, options: CrdWaitOptions = {}): Promise<void> {
  await installCrd(client, applicationCrd(), options);
}
