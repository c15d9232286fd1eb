import type { KubeConfig } from '@kubernetes/client-node';
import { defer, map, type Observable } from 'rxjs';
import { transportFor, type KubeTransport } from '../client/kubeTransport.js';
import type { RequestObserver } from '../../types.js';
import { leaseClient, leaseResource, leasesPath, type LeaseClient } from './leaseClient.js';
import type { Lease } from './leaseRecord.js';

/**
 * The calls sharding membership makes: those of leader election on its own
 * Lease, plus a list of every member's Lease by label. The list is a
 * quorum read, like the elector's get: a member judges the others from what
 * the server holds now, never from a cache that may lag.
 */
export interface ShardLeaseClient extends LeaseClient {
  /** The Leases of `namespace` whose labels match `labelSelector`. */
  list(namespace: string, labelSelector: string): Observable<Lease[]>;
  /**
   * Deletes `lease` only if it is still the one read: its uid and
   * resourceVersion are the delete's preconditions, so a Lease written
   * since (a member come back) fails with a 409 and stays. A 404 means it
   * is gone already.
   */
  delete(lease: Lease): Observable<unknown>;
}

/** A `ShardLeaseClient` over a kubeconfig (HTTP) or a transport (the in-process server of `rxkube/testing`). */
export function shardLeaseClient(server: KubeConfig | KubeTransport, requests?: RequestObserver): ShardLeaseClient {
  const transport = transportFor(server, requests);
  return {
    ...leaseClient(transport),
    list: (namespace, labelSelector) =>
      transport
        .send<{ items?: Lease[] }>({
          method: 'GET',
          path: leasesPath(namespace),
          query: { labelSelector },
          describe: { verb: 'list', resource: leaseResource, namespace },
        })
        .pipe(map((list) => list?.items ?? [])),
    delete: (lease) =>
      defer(() => {
        const { namespace, name, uid, resourceVersion } = lease.metadata ?? {};
        if (typeof namespace !== 'string' || typeof name !== 'string' || typeof uid !== 'string' || typeof resourceVersion !== 'string') {
          throw new TypeError('cannot delete a Lease without metadata.namespace, name, uid and resourceVersion: its preconditions');
        }
        return transport.send<unknown>({
          method: 'DELETE',
          path: leasesPath(namespace, name),
          body: { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid, resourceVersion } },
          describe: { verb: 'delete', resource: leaseResource, namespace, name },
        });
      }),
  };
}
