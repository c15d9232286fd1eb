import {
  ApiException,
  CoordinationV1Api,
  type ConfigurationOptions,
  type KubeConfig,
  Observable as ClientObservable,
  type ObservableMiddleware,
  type V1Lease,
} from '@kubernetes/client-node';
import { catchError, defer, Observable, of, throwError } from 'rxjs';
import type { Lease } from './leaseRecord.js';
import { errorFromResponse, isNotFound, KubeApiError, type RequestDescription } from '../client/errors.js';

/**
 * The three calls leader election makes on its Lease, with the API server's
 * optimistic concurrency: `update` carries the resourceVersion it read, and a
 * 409 (`isConflict`, or `isAlreadyExists` for `create`) means another replica
 * wrote first, a lost race, not a fault.
 *
 * Each call is a cold Observable of one value: nothing is sent until it is
 * subscribed, and unsubscribing aborts the request. Errors are
 * `KubeApiError`s (see `./errors.ts`), so `isConflict` and friends apply.
 * Observables rather than promises so that an in-memory implementation
 * (`rxkube/testing`'s `inMemoryLeaseClient`) can answer in virtual time.
 */
export interface LeaseClient {
  /** The lease, or `undefined` when it does not exist (404). */
  get(namespace: string, name: string): Observable<Lease | undefined>;
  /** Creates the lease (its namespace and name from `metadata`); 409 AlreadyExists when it exists. */
  create(lease: Lease): Observable<Lease>;
  /** Replaces the lease; 409 Conflict when `metadata.resourceVersion` is not the stored one. */
  update(lease: Lease): Observable<Lease>;
}

const resource = 'leases.coordination.k8s.io';

/** client-node deserializes into model classes with `Date`s; the rest of rxkube speaks plain JSON. */
function plain(lease: V1Lease): Lease {
  return JSON.parse(JSON.stringify(lease)) as Lease;
}

/**
 * `Lease.spec`'s MicroTimes are strings here, `V1MicroTime` (a `Date`) in
 * client-node's model. Its serializer passes strings through untouched,
 * which is what we want: we write kube's six-digit form ourselves.
 */
function asV1Lease(lease: Lease): V1Lease {
  return lease as unknown as V1Lease;
}

function toKubeApiError(request: RequestDescription, err: unknown): KubeApiError {
  if (err instanceof KubeApiError) return err;
  if (err instanceof ApiException) {
    const exception = err as ApiException<unknown>;
    const body = exception.body;
    const text = typeof body === 'string' ? body : body === undefined ? '' : JSON.stringify(body);
    const headers = exception.headers ?? {};
    return errorFromResponse(request, exception.code, text, headers['retry-after']);
  }
  const message = err instanceof Error ? err.message : String(err);
  return new KubeApiError(request, { code: 0, message, cause: err });
}

/** Per-call options that let unsubscribing abort the request (client-node takes no signal otherwise). */
function abortable(signal: AbortSignal): ConfigurationOptions {
  const middleware: ObservableMiddleware = {
    pre: (context) => {
      context.setSignal(signal);
      return new ClientObservable(Promise.resolve(context));
    },
    post: (context) => new ClientObservable(Promise.resolve(context)),
  };
  return { middleware: [middleware], middlewareMergeStrategy: 'append' };
}

/** One request as a cold Observable: sent on subscribe, aborted on unsubscribe. */
function call(
  request: RequestDescription,
  send: (options: ConfigurationOptions) => Promise<V1Lease>,
): Observable<Lease> {
  return new Observable<Lease>((subscriber) => {
    const controller = new AbortController();
    send(abortable(controller.signal)).then(
      (lease) => {
        subscriber.next(plain(lease));
        subscriber.complete();
      },
      (err: unknown) => {
        // After an unsubscribe the abort's own rejection has nobody to go to.
        if (!controller.signal.aborted) subscriber.error(toKubeApiError(request, err));
      },
    );
    return () => controller.abort();
  });
}

function target(lease: Lease, verb: string): RequestDescription & { namespace: string; name: string } {
  const { namespace, name } = lease.metadata ?? {};
  if (typeof namespace !== 'string' || namespace === '' || typeof name !== 'string' || name === '') {
    throw new TypeError(`cannot ${verb} a Lease without metadata.namespace and metadata.name`);
  }
  return { verb, resource, namespace, name };
}

/** The HTTP `LeaseClient`, through client-node's `CoordinationV1Api` with the kubeconfig's credentials. */
export function leaseClient(kubeConfig: KubeConfig): LeaseClient {
  const api = kubeConfig.makeApiClient(CoordinationV1Api);
  return {
    get: (namespace, name) =>
      call({ verb: 'get', resource, namespace, name }, (options) =>
        api.readNamespacedLease({ namespace, name }, options),
      ).pipe(catchError((err: unknown) => (isNotFound(err) ? of(undefined) : throwError(() => err)))),
    create: (lease) =>
      defer(() => {
        const request = target(lease, 'create');
        return call(request, (options) =>
          api.createNamespacedLease({ namespace: request.namespace, body: asV1Lease(lease) }, options),
        );
      }),
    update: (lease) =>
      defer(() => {
        const request = target(lease, 'update');
        return call(request, (options) =>
          api.replaceNamespacedLease(
            { namespace: request.namespace, name: request.name, body: asV1Lease(lease) },
            options,
          ),
        );
      }),
  };
}
