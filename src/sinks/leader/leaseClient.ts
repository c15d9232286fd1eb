import type { KubeConfig } from '@kubernetes/client-node';
import { catchError, defer, of, throwError, type Observable } from 'rxjs';
import { isNotFound } from '../client/errors.js';
import { transportFor, type KubeRequest, type KubeTransport } from '../client/kubeTransport.js';
import type { RequestObserver } from '../../types.js';
import type { Lease } from './leaseRecord.js';

/**
 * The three calls leader election makes on its Lease, with the API server's
 * optimistic concurrency: `update` carries the resourceVersion it read, and a
 * 409 (`isConflict`, or `isAlreadyExists` for `create`) means another replica
 * wrote first, a lost race, not a fault.
 *
 * Each call is a cold Observable of one value: nothing is sent until it is
 * subscribed, and unsubscribing aborts the request. Errors are
 * `KubeApiError`s, so `isConflict` and friends apply. Observables rather than
 * promises so that, over `rxkube/testing`'s in-process server, a call can
 * answer in virtual time.
 */
export interface LeaseClient {
  /** The lease, or `undefined` when it does not exist (404). */
  get(namespace: string, name: string): Observable<Lease | undefined>;
  /** Creates the lease (its namespace and name from `metadata`); 409 AlreadyExists when it exists. */
  create(lease: Lease): Observable<Lease>;
  /** Replaces the lease; 409 Conflict when `metadata.resourceVersion` is not the stored one. */
  update(lease: Lease): Observable<Lease>;
}

/** The Leases' resource, as requests name it in errors and records. */
export const leaseResource = 'leases.coordination.k8s.io';

/** The path of the Leases of `namespace`, or of one of them. */
export function leasesPath(namespace: string, name?: string): string {
  const base = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  return name === undefined ? base : `${base}/${encodeURIComponent(name)}`;
}

function target(lease: Lease, verb: string): { namespace: string; name: string } {
  const { namespace, name } = lease.metadata ?? {};
  if (typeof namespace !== 'string' || namespace === '' || typeof name !== 'string' || name === '') {
    throw new TypeError(`cannot ${verb} a Lease without metadata.namespace and metadata.name`);
  }
  return { namespace, name };
}

/**
 * The `LeaseClient` over a transport: the same requests as every other
 * write, through `kubeClient`'s transport (HTTP with a kubeconfig's
 * credentials, or the in-process server of `rxkube/testing`). No resends
 * here: the elector decides when to try again.
 */
export function leaseClient(server: KubeConfig | KubeTransport, requests?: RequestObserver): LeaseClient {
  const transport = transportFor(server, requests);
  if (transport !== server && (server as KubeConfig).getCurrentCluster() === null) {
    // Said at once, not at the first renewal: an elector that can never reach its Lease is a configuration error.
    throw new TypeError('the kubeconfig has no current cluster');
  }
  const send = (request: KubeRequest): Observable<Lease> => transport.send<Lease>(request);
  return {
    get: (namespace, name) =>
      send({ method: 'GET', path: leasesPath(namespace, name), describe: { verb: 'get', resource: leaseResource, namespace, name } }).pipe(
        catchError((err: unknown) => (isNotFound(err) ? of(undefined) : throwError(() => err))),
      ),
    create: (lease) =>
      defer(() => {
        const { namespace, name } = target(lease, 'create');
        return send({ method: 'POST', path: leasesPath(namespace), body: lease, describe: { verb: 'create', resource: leaseResource, namespace, name } });
      }),
    update: (lease) =>
      defer(() => {
        const { namespace, name } = target(lease, 'update');
        return send({ method: 'PUT', path: leasesPath(namespace, name), body: lease, describe: { verb: 'update', resource: leaseResource, namespace, name } });
      }),
  };
}
