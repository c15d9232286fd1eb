import type { KubeConfig } from '@kubernetes/client-node';
import { map, type Observable } from 'rxjs';
import { transportFor, type KubeTransport } from '../client/kubeTransport.js';
import type { RequestObserver } from '../../types.js';
import { leaseClient, type LeaseClient } from './leaseClient.js';
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
          path: `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`,
          query: { labelSelector },
          describe: { verb: 'list', resource: 'leases.coordination.k8s.io', namespace },
        })
        .pipe(map((list) => list?.items ?? [])),
  };
}
