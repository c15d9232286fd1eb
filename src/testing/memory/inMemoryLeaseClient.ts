import { asyncScheduler, Observable, type SchedulerLike } from 'rxjs';
import { KubeApiError, type RequestDescription } from '../../sinks/client/errors.js';
import type { LeaseClient } from '../../sinks/leader/leaseClient.js';
import type { Lease } from '../../sinks/leader/leaseRecord.js';

/**
 * A `LeaseClient` over an in-memory store, for marble tests of leader
 * election in virtual time: several electors share one instance as they
 * would share one API server. It keeps the server's rules that matter to
 * the algorithm: every write moves `resourceVersion`, an update with a stale
 * one is a 409 Conflict (one without any is unconditional), a create of an existing name a 409 AlreadyExists,
 * an update of a missing lease a 404 NotFound.
 *
 * With `latency`, a call takes time on the scheduler twice: on the way to the
 * store (where it takes effect) and on the way back. Unsubscribing before it
 * reaches the store cancels it; after, only the answer is lost, as with a
 * request the server applied but whose response never came.
 */
export interface InMemoryLeaseClientOptions {
  /** Default `asyncScheduler`; pass the `TestScheduler` in marble tests. */
  scheduler?: SchedulerLike;
  /** Ms for each leg of a call, or a function drawn once per leg. Default 0: calls answer synchronously. */
  latency?: number | (() => number);
}

export interface InMemoryLeaseClient extends LeaseClient {
  /** The stored lease (a copy), or `undefined`. */
  lease(namespace: string, name: string): Lease | undefined;
  /** Stores a lease as it is (a new resourceVersion), bypassing preconditions: to seed a test. */
  put(lease: Lease): Lease;
  /** How many calls took effect in the store, by verb. */
  readonly calls: { readonly get: number; readonly create: number; readonly update: number };
}

const resource = 'leases.coordination.k8s.io';

function statusError(request: RequestDescription, code: number, reason: string, message: string): KubeApiError {
  return new KubeApiError(request, {
    code,
    reason,
    message,
    status: { kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message },
  });
}

function keyOf(lease: Lease, verb: string): { namespace: string; name: string } {
  const { namespace, name } = lease.metadata ?? {};
  if (typeof namespace !== 'string' || namespace === '' || typeof name !== 'string' || name === '') {
    throw new TypeError(`cannot ${verb} a Lease without metadata.namespace and metadata.name`);
  }
  return { namespace, name };
}

export function inMemoryLeaseClient(options: InMemoryLeaseClientOptions = {}): InMemoryLeaseClient {
  const scheduler = options.scheduler ?? asyncScheduler;
  const latency = options.latency ?? 0;
  const stored = new Map<string, Lease>();
  const calls = { get: 0, create: 0, update: 0 };
  let resourceVersion = 0;

  const legDelay = (): number => (typeof latency === 'number' ? latency : latency());

  const save = (lease: Lease, namespace: string, name: string): Lease => {
    resourceVersion += 1;
    const saved: Lease = {
      ...structuredClone(lease),
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { ...structuredClone(lease.metadata), namespace, name, resourceVersion: String(resourceVersion) },
    };
    stored.set(`${namespace}/${name}`, saved);
    return structuredClone(saved);
  };

  /** Runs `apply` against the store after one leg of latency and answers after another. */
  const request = <T>(apply: () => T): Observable<T> =>
    new Observable<T>((subscriber) => {
      const answer = (result: { value: T } | { error: unknown }): void => {
        const deliver = (): void => {
          if ('error' in result) subscriber.error(result.error);
          else {
            subscriber.next(result.value);
            subscriber.complete();
          }
        };
        const back = legDelay();
        if (back > 0) subscriber.add(scheduler.schedule(deliver, back));
        else deliver();
      };
      const reach = (): void => {
        try {
          answer({ value: apply() });
        } catch (error) {
          answer({ error });
        }
      };
      const there = legDelay();
      if (there > 0) subscriber.add(scheduler.schedule(reach, there));
      else reach();
    });

  return {
    calls,
    lease: (namespace, name) => {
      const lease = stored.get(`${namespace}/${name}`);
      return lease === undefined ? undefined : structuredClone(lease);
    },
    put: (lease) => {
      const { namespace, name } = keyOf(lease, 'put');
      return save(lease, namespace, name);
    },
    get: (namespace, name) =>
      request(() => {
        calls.get += 1;
        const lease = stored.get(`${namespace}/${name}`);
        return lease === undefined ? undefined : structuredClone(lease);
      }),
    create: (lease) =>
      request(() => {
        calls.create += 1;
        const { namespace, name } = keyOf(lease, 'create');
        if (stored.has(`${namespace}/${name}`)) {
          throw statusError(
            { verb: 'create', resource, namespace, name },
            409,
            'AlreadyExists',
            `${resource} "${name}" already exists`,
          );
        }
        return save(lease, namespace, name);
      }),
    update: (lease) =>
      request(() => {
        calls.update += 1;
        const { namespace, name } = keyOf(lease, 'update');
        const current = stored.get(`${namespace}/${name}`);
        const describe = { verb: 'update', resource, namespace, name };
        if (current === undefined) throw statusError(describe, 404, 'NotFound', `${resource} "${name}" not found`);
        const precondition = lease.metadata.resourceVersion;
        // As kube, for Leases: an update without a resourceVersion is unconditional.
        if (precondition !== undefined && precondition !== '' && precondition !== current.metadata.resourceVersion) {
          throw statusError(
            describe,
            409,
            'Conflict',
            `Operation cannot be fulfilled on ${resource} "${name}": the object has been modified; ` +
              'please apply your changes to the latest version and try again',
          );
        }
        return save(lease, namespace, name);
      }),
  };
}
