import { Observable, type SchedulerLike } from 'rxjs';
import { apiVersionOf } from '../../apiserver/api/resourceType.js';
import type { InProcessServer } from '../../apiserver/inProcessServer.js';
import { mediaType } from '../../apiserver/http/httpIo.js';
import { KubeApiError } from '../../sinks/client/errors.js';
import { parseAnswer, type KubeRequest, type KubeTransport } from '../../sinks/client/kubeTransport.js';
import { joinKey, type KubeObject } from '../../types.js';
import { cloneJson } from '../../util/json.js';
import type { MemoryRequest, MemoryVerb } from './memoryRequest.js';

/** Ms for one leg of a request, or a function drawn once per leg. */
export type Latency = number | (() => number);

export interface MemoryTransportOptions {
  /** Where the legs of a request take their time. */
  scheduler: SchedulerLike;
  /** Ms on the way to the server, where the request takes effect (default 0). */
  latency?: Latency;
  /** Ms on the way back with the answer (default 0). */
  answerLatency?: Latency;
  /** Whether requests meet the server's injected faults (default true). */
  faulty?: boolean;
  /** Told of each request the server answered. */
  record?: (request: MemoryRequest) => void;
}

const memoryVerbs = new Set<string>(['get', 'list', 'create', 'update', 'patch', 'apply', 'delete']);

function legMs(latency: Latency | undefined): number {
  return latency === undefined ? 0 : typeof latency === 'number' ? latency : latency();
}

function header(headers: Readonly<Record<string, string | string[]>>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value[0] : value;
  }
  return undefined;
}

/**
 * A `KubeTransport` to the embedded API server in the same process: each
 * request goes through the server's own routing, faults, validation, writes
 * and Status errors (`InProcessServer`), answered on `scheduler` after its
 * legs of latency, so in virtual time a request takes exactly the time the
 * test gives it. With `latency`, unsubscribing before the request reaches
 * the server cancels it; after, only the answer is lost, as with a request
 * a real server applied but whose response never came.
 */
export function memoryTransport(server: InProcessServer, options: MemoryTransportOptions): KubeTransport {
  const { scheduler } = options;
  const faulty = options.faulty !== false;

  const record = (request: KubeRequest, outcome: { status: number; value?: unknown; error?: KubeApiError; injected: boolean }, kind: string, apiVersion: string): void => {
    const { verb, resource, namespace, name, subresource } = request.describe;
    if (options.record === undefined || !memoryVerbs.has(verb)) return;
    const type = mediaType(request.contentType);
    const rv = (outcome.value as KubeObject | undefined)?.metadata?.resourceVersion;
    options.record({
      at: scheduler.now(),
      verb: verb as MemoryVerb,
      ...(subresource === 'status' ? { subresource } : {}),
      ...(verb === 'patch' ? { patchType: type === 'application/json-patch+json' ? ('json' as const) : ('merge' as const) } : {}),
      apiVersion,
      kind,
      resource,
      ...(namespace !== undefined ? { namespace } : {}),
      name: name ?? '',
      key: name === undefined ? (namespace ?? '') : joinKey(namespace, name),
      ...(request.query?.fieldManager !== undefined ? { fieldManager: request.query.fieldManager } : {}),
      ...(request.body !== undefined ? { body: cloneJson(request.body) } : {}),
      code: outcome.status,
      ...(outcome.error !== undefined ? { error: outcome.error } : {}),
      ...(outcome.injected ? { injected: true } : {}),
      ...(typeof rv === 'string' ? { resourceVersion: rv } : {}),
    });
  };

  return {
    send: <T>(request: KubeRequest) =>
      new Observable<T>((subscriber) => {
        const later = (ms: number, run: () => void): void => {
          if (ms > 0) subscriber.add(scheduler.schedule(run, ms));
          else run();
        };
        const arrive = (): void => {
          const url = new URL(`http://in-process${request.path}`);
          for (const [name, value] of Object.entries(request.query ?? {})) if (value !== undefined) url.searchParams.set(name, value);
          const headers = {
            accept: 'application/json',
            userAgent: 'rxkube',
            ...(request.body !== undefined ? { contentType: request.contentType ?? 'application/json' } : {}),
          };
          const body = request.body === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(request.body));
          const prepared = server.prepare({ method: request.method, url, headers });
          const kind = prepared.type?.kind ?? '';
          const apiVersion = prepared.type === undefined ? '' : apiVersionOf(prepared.type);
          later(faulty ? server.faults.delayFor(prepared.info) : 0, () => {
            const { response, injected } = server.answer(prepared, body, faulty);
            let value: unknown;
            let error: unknown;
            try {
              value = parseAnswer(request.describe, response.status, response.body, header(response.headers, 'retry-after'));
            } catch (err) {
              error = err;
            }
            record(request, { status: response.status, value, error: error instanceof KubeApiError ? error : undefined, injected }, kind, apiVersion);
            later(legMs(options.answerLatency), () => {
              if (error !== undefined) subscriber.error(error);
              else {
                subscriber.next(value as T);
                subscriber.complete();
              }
            });
          });
        };
        later(legMs(options.latency), arrive);
      }),
  };
}
