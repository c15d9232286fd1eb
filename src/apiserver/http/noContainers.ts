import { badRequest, type ApiError } from '../api/statusError.js';
import type { ResourceRequest } from './requestContext.js';

/**
 * The subresources that reach a kubelet or what runs behind a Service: `pods/log`, `exec`,
 * `attach`, `portforward`, `proxy`, `services/proxy`, `nodes/proxy`. This server runs no
 * containers and no kubelets, so after checking that the object exists (a missing one is the
 * usual 404) each answers a 400 Status that says so, in the way kube answers a logs request for
 * a pod that has no running container: never a bare NotFound, which reads as a wrong URL.
 */

const what: Readonly<Record<string, string>> = {
  log: 'show the logs of',
  exec: 'exec into',
  attach: 'attach to',
  portforward: 'port-forward to',
  proxy: 'proxy to',
};

export function isContainerSubresource(subresource: string | undefined): boolean {
  return subresource !== undefined && what[subresource] !== undefined;
}

/** The answer to a request for one of these subresources: the object's 404, or a 400 that says why there is nothing to reach. */
export function noContainersError(r: ResourceRequest): ApiError {
  const name = r.name ?? '';
  // Throws the object's own NotFound when it does not exist.
  r.server.cluster.get(r.type, r.namespace, name);
  const sub = r.subresource ?? '';
  const target = `${r.type.singular} ${JSON.stringify(name)}`;
  const why =
    r.type.resource === 'nodes'
      ? 'this API server (rxkube) has no kubelets'
      : r.type.resource === 'services'
        ? 'this API server (rxkube) runs no containers, so nothing listens behind a service'
        : 'this API server (rxkube) runs no containers';
  return badRequest(`cannot ${what[sub] ?? sub} ${target}: ${why}`);
}
