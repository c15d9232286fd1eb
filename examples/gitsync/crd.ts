import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { KubeClient, KubeObject } from 'rxkube';

const crdFile = new URL('./crd.yaml', import.meta.url);

/** The Application CustomResourceDefinition, as in `crd.yaml`. */
export function applicationCrd(): KubeObject {
  return parse(readFileSync(crdFile, 'utf8')) as KubeObject;
}

/** Applies the CRD (server-side apply, idempotent) and waits until the API server reports it `Established`. */
export async function installApplicationCrd(client: KubeClient, options: { signal?: AbortSignal; attempts?: number } = {}): Promise<void> {
  const crd = applicationCrd();
  await client.apply(crd, { force: true, ...(options.signal ? { signal: options.signal } : {}) });
  for (let attempt = 0; ; attempt++) {
    const live = await client.get<KubeObject & { status?: { conditions?: { type: string; status: string }[] } }>(crd, options);
    if (live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    if (attempt >= (options.attempts ?? 300)) throw new Error(`CustomResourceDefinition ${crd.metadata.name ?? ''} not Established after ${attempt} checks`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
