import type { KubeConfig } from '@kubernetes/client-node';
import { Observable } from 'rxjs';
import type { RequestObserver, ResourceRef } from '../types.js';
import { readFailure, requestTarget, sendGet } from './http.js';

/** The most of a discovery document read; kube's largest groups are a few hundred kB. */
const DISCOVERY_LIMIT = 8 * 1024 * 1024;

/** The discovery document of one group version: `/api/v1` for the core group, `/apis/<group>/<version>` otherwise. */
export function discoveryPath(resource: ResourceRef): string {
  return resource.group ? `/apis/${resource.group}/${resource.version}` : `/api/${resource.version}`;
}

/**
 * Whether the server serves `resource` now, as its discovery says: one GET
 * of the group version's `APIResourceList`, true when it lists the
 * resource's plural. A group version the server does not know (404) is
 * false. Kube lists a CRD's resource there only once the CRD is
 * `Established` (apiextensions' discovery controller skips the others), so
 * true means a list will be answered.
 *
 * Emits once and completes; errors (the server unreachable, a status other
 * than 200 or 404, a body that is no `APIResourceList`) with a message that
 * says which. Unsubscribing aborts the request. Needs no RBAC rule: every
 * authenticated identity may read discovery (kube's `system:discovery`).
 */
export function servedInDiscovery(kubeConfig: KubeConfig, resource: ResourceRef, requests?: RequestObserver): Observable<boolean> {
  return new Observable<boolean>((subscriber) => {
    const abort = new AbortController();
    const path = discoveryPath(resource);
    let answered: ((code: number) => void) | undefined;
    const ask = async (): Promise<boolean> => {
      const { url, options } = await requestTarget(kubeConfig, path, new URLSearchParams(), 'application/json');
      answered = requests?.request({ method: 'GET', host: url.host, timed: true });
      const response = await sendGet(url, options, abort.signal);
      answered?.(response.statusCode ?? 0);
      answered = undefined;
      if (response.statusCode === 404) {
        response.resume();
        return false;
      }
      if (response.statusCode !== 200) {
        const failure = await readFailure(response);
        throw new Error(`discovery of ${path} answered ${failure.code} ${failure.reason}: ${failure.message}`);
      }
      return listsResource(await readJson(response, path), resource.resource, path);
    };
    ask().then(
      (served) => {
        subscriber.next(served);
        subscriber.complete();
      },
      (err: unknown) => {
        answered?.(0);
        subscriber.error(err instanceof Error ? err : new Error(String(err)));
      },
    );
    return () => abort.abort();
  });
}

async function readJson(response: AsyncIterable<unknown>, path: string): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > DISCOVERY_LIMIT) throw new Error(`discovery of ${path} is larger than ${DISCOVERY_LIMIT} bytes`);
    chunks.push(buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks, size).toString('utf8')) as unknown;
  } catch {
    throw new Error(`discovery of ${path} is not JSON`);
  }
}

/** Whether an `APIResourceList` names `plural` among its resources (subresources, `pods/status`, are other names). */
function listsResource(list: unknown, plural: string, path: string): boolean {
  const resources = (list as { resources?: unknown } | null)?.resources;
  if (!Array.isArray(resources)) throw new Error(`discovery of ${path} is no APIResourceList (no resources array)`);
  return resources.some((entry) => (entry as { name?: unknown } | null)?.name === plural);
}
