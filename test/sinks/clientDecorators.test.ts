import { expect } from 'chai';
import { kubeClient, silentLogger, type KubeClient, type KubeObject } from 'rxkube';
import { memoryRecorder } from 'rxkube/testing';
import { EMPTY } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { OwnWrites } from '../../src/controller/ownWrites.js';
import { OwnWritesClient } from '../../src/controller/ownWritesClient.js';
import { runParts } from '../../src/observe/timelineClient.js';
import { TimelineHub } from '../../src/observe/timelineHub.js';
import type { TimelineEntry } from '../../src/observe/timeline.js';
import { SpanClient } from '../../src/observe/tracing/spanClient.js';
import { ForwardingClient, type KubeMethod } from '../../src/sinks/client/forwardingClient.js';
import type { ResourceInfo } from '../../src/sinks/client/resources.js';
import { inMemoryTracing } from '../support/tracing.js';

const object: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns', resourceVersion: '7', uid: 'uid-a' } };
const ref = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'a' };
const info: ResourceInfo = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true };
const signal = new AbortController().signal;

/**
 * Arguments for one call of each method, and what the inner client answers
 * it. Typed by every method of `KubeClient`: a method added to the client
 * without an entry here fails to compile, and the test below compares the
 * keys with the methods the base and the real client have at run time.
 */
const calls: { readonly [M in KubeMethod]: { readonly args: Parameters<KubeClient[M]>; readonly answer: Awaited<ReturnType<KubeClient[M]>> } } = {
  get: { args: [ref, { signal }], answer: { ...object } },
  create: { args: [object, { signal, fieldManager: 'm' }], answer: { ...object } },
  update: { args: [object, { fieldManager: 'm' }], answer: { ...object } },
  apply: { args: [object, { force: true, subresource: 'status' }], answer: { ...object } },
  createOrUpdate: { args: [object, (o) => o, { signal }], answer: { result: 'updated', object: { ...object } } },
  patchMerge: { args: [ref, { data: { k: 'v' } }, { signal }], answer: { ...object } },
  patchJson: { args: [ref, [{ op: 'remove', path: '/data/k' }], { signal }], answer: { ...object } },
  updateStatus: { args: [object, undefined, { signal }], answer: { result: 'unchanged', object: { ...object } } },
  patchStatus: { args: [ref, { status: { ready: true } }, { signal }], answer: { ...object } },
  remove: { args: [ref, { propagationPolicy: 'Foreground' }], answer: { result: 'deleted' } },
  list: { args: [{ apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns' }, { labelSelector: 'a=b' }], answer: [{ ...object }] },
  resource: { args: ['v1', 'ConfigMap', { signal }], answer: info },
};
const methods = Object.keys(calls) as KubeMethod[];

type Failure = { how: 'throw' | 'reject'; method: KubeMethod; error: Error } | undefined;

/** An inner client that records each call and answers from `calls`; `failure` makes one method throw or reject instead. */
function recordingClient(failure: Failure = undefined) {
  const seen: { method: string; args: unknown[] }[] = [];
  const client = Object.fromEntries(
    methods.map((method) => [
      method,
      (...args: unknown[]) => {
        seen.push({ method, args });
        if (failure?.method === method) {
          if (failure.how === 'throw') throw failure.error;
          return Promise.reject(failure.error);
        }
        return Promise.resolve(calls[method].answer);
      },
    ]),
  ) as unknown as KubeClient;
  return { client, seen };
}

/** Each decorator over `inner`, set up so that it does its work (the timeline read, read-your-own-writes on). */
const decorators: Record<string, (inner: KubeClient) => KubeClient> = {
  OwnWritesClient: (inner) => new OwnWritesClient(inner, new OwnWrites([], new TestScheduler(() => undefined), 1000), 'ns/a'),
  'the timeline client (runParts)': (inner) => {
    const hub = new TimelineHub('test', new TestScheduler(() => undefined), silentLogger, () => () => undefined);
    const heard: TimelineEntry[] = [];
    hub.timeline.subscribe((entry) => heard.push(entry));
    const client = runParts(hub, 'ns/a', { client: inner, recorder: memoryRecorder() }).client;
    if (client === inner) throw new Error('the hub is read, yet the run got the client unwrapped');
    return client;
  },
  SpanClient: (inner) => {
    const tracer = inMemoryTracing().provider.getTracer('test');
    return new SpanClient(inner, { tracer, parent: () => undefined, now: () => 0, annotate: false });
  },
};

/** Calls `method` of `client` with the given arguments, as a caller would (untyped: every method at once). */
function invoke(client: KubeClient, method: KubeMethod, args: readonly unknown[]): Promise<unknown> {
  return (client[method] as (...a: unknown[]) => Promise<unknown>).apply(client, [...args]);
}

describe('the client decorators: every KubeClient method forwarded, through ForwardingClient', () => {
  it('has an entry here for every method of the base and of the real client', () => {
    const own = Object.getOwnPropertyNames(ForwardingClient.prototype).filter((name) => !['constructor', 'around', 'forward'].includes(name));
    expect([...own].sort()).to.deep.equal([...methods].sort());
    // The real client's methods (a transport that never answers: nothing is sent).
    expect(Object.keys(kubeClient({ send: () => EMPTY })).sort()).to.deep.equal([...methods].sort());
  });

  for (const [name, decorate] of Object.entries(decorators)) {
    describe(name, () => {
      for (const method of methods) {
        it(`${method}: passes the arguments on as they came and answers the inner client's answer`, async () => {
          const { client, seen } = recordingClient();
          const answer = await invoke(decorate(client), method, calls[method].args);
          expect(answer).to.equal(calls[method].answer);
          // First: the call itself (the span client then asks for the kind's resource, to name its span).
          expect(seen[0]?.method).to.equal(method);
          expect(seen[0]?.args).to.have.length(calls[method].args.length);
          calls[method].args.forEach((arg, i) => expect(seen[0]?.args[i], `argument ${i}`).to.equal(arg));
        });

        it(`${method}: a rejection of the inner client reaches the caller unchanged`, async () => {
          const error = new Error(`${method} failed`);
          const { client } = recordingClient({ how: 'reject', method, error });
          const outcome = await invoke(decorate(client), method, calls[method].args).then(
            () => 'answered',
            (err: unknown) => err,
          );
          expect(outcome).to.equal(error);
        });

        it(`${method}: a throw of the inner client reaches the caller unchanged`, () => {
          const error = new Error(`${method} threw`);
          const { client } = recordingClient({ how: 'throw', method, error });
          expect(() => invoke(decorate(client), method, calls[method].args)).to.throw(error);
        });
      }
    });
  }
});
