import { asyncScheduler, type SchedulerLike } from 'rxjs';
import type { ResourceType } from '../../apiserver/api/resourceType.js';
import { leaseClient, type LeaseClient } from '../../sinks/leader/leaseClient.js';
import type { Lease } from '../../sinks/leader/leaseRecord.js';
import { cloneJson } from '../../util/json.js';
import { memoryTransport, type Latency } from './memoryTransport.js';
import { virtualServer } from './virtualServer.js';

/**
 * A `LeaseClient` over an in-memory cluster, for marble tests of leader
 * election in virtual time: several electors share one instance as they
 * would share one API server. It is the real `leaseClient` over the
 * embedded API server's request handling in process, so the server's rules
 * hold: every write moves `resourceVersion`, an update with a stale one is a
 * 409 Conflict (one without any is unconditional, as kube allows for
 * Leases), a create of an existing name a 409 AlreadyExists, an update of a
 * missing lease a 404 NotFound.
 *
 * With `latency`, a call takes time on the scheduler twice: on the way to the
 * server (where it takes effect) and on the way back. Unsubscribing before it
 * reaches the server cancels it; after, only the answer is lost, as with a
 * request the server applied but whose response never came.
 */
export interface InMemoryLeaseClientOptions {
  /** Default `asyncScheduler`; pass the `TestScheduler` in marble tests. */
  scheduler?: SchedulerLike;
  /** Ms for each leg of a call, or a function drawn once per leg. Default 0: calls answer synchronously. */
  latency?: Latency;
}

/** A `LeaseClient` over Leases kept in memory, with kube's preconditions and resourceVersions, and what a test reads back. */
export interface InMemoryLeaseClient extends LeaseClient {
  /** The stored lease (a copy), or `undefined`. */
  lease(namespace: string, name: string): Lease | undefined;
  /** Stores a lease as it is (a new resourceVersion), bypassing preconditions: to seed a test. */
  put(lease: Lease): Lease;
  /** How many calls reached the server, by verb. */
  readonly calls: { readonly get: number; readonly create: number; readonly update: number };
}

/** A lease client with no server, on `scheduler`'s clock, for leader election tests in virtual time. */
export function inMemoryLeaseClient(options: InMemoryLeaseClientOptions = {}): InMemoryLeaseClient {
  const scheduler = options.scheduler ?? asyncScheduler;
  const server = virtualServer(scheduler);
  const leases = server.cluster.registry.lookup('coordination.k8s.io', 'v1', 'leases') as ResourceType;
  const calls = { get: 0, create: 0, update: 0 };
  const latency = options.latency ?? 0;
  const transport = memoryTransport(server, {
    scheduler,
    latency,
    answerLatency: latency,
    record: ({ verb }) => {
      if (verb === 'get' || verb === 'create' || verb === 'update') calls[verb] += 1;
    },
  });

  return {
    ...leaseClient(transport),
    calls,
    lease: (namespace, name) => {
      const found = server.cluster.find(leases, namespace, name);
      return found === undefined ? undefined : (cloneJson(found.object) as Lease);
    },
    put: (lease) => {
      const { namespace, name } = lease.metadata ?? {};
      if (typeof namespace !== 'string' || namespace === '' || typeof name !== 'string' || name === '') {
        throw new TypeError('cannot put a Lease without metadata.namespace and metadata.name');
      }
      const body: Lease = { ...lease, apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' };
      return cloneJson(server.cluster.put(leases, body, 'test').object) as Lease;
    },
  };
}
