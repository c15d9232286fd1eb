import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { ForwardingClient, targetOf, type KubeCall } from '../../sinks/client/forwardingClient.js';
import type { KubeClient, ListTarget, Mutate, ObjectTarget } from '../../sinks/client/kubeClient.js';
import type { ResourceInfo } from '../../sinks/client/resources.js';
import { cloneJson, jsonEqual } from '../../util/json.js';
import type { KubeObject } from '../../types.js';
import { addressed, answerCode } from '../addressed.js';
import { formatTraceparent, TRACEPARENT_ANNOTATION } from './traceparent.js';

/** The HTTP method each client method sends last (a `createOrUpdate` or `updateStatus` that wrote nothing sent only its GET). */
const METHODS: Readonly<Record<string, string>> = {
  get: 'GET',
  list: 'GET',
  resource: 'GET',
  create: 'POST',
  update: 'PUT',
  createOrUpdate: 'PUT',
  updateStatus: 'PUT',
  apply: 'PATCH',
  patchMerge: 'PATCH',
  patchJson: 'PATCH',
  patchStatus: 'PATCH',
  remove: 'DELETE',
};

/** Where a span client gets its parent (the run's span, while it runs), its clock, and whether writes carry the run's trace context. */
export interface SpanClientOptions {
  readonly tracer: Tracer;
  /** The span of the run that makes the requests, while it runs. */
  readonly parent: () => Span | undefined;
  /** Times spans start and end at (the controller's scheduler, ms). */
  readonly now: () => number;
  /** Stamp `rxkube.io/traceparent` on the writes that change an object anyway (a create, a `createOrUpdate` that writes). */
  readonly annotate: boolean;
}

/**
 * A `KubeClient` whose every call is a child span of the run's span, with
 * OpenTelemetry's HTTP client attributes (`http.request.method`,
 * `url.template` from the kind's resource, `http.response.status_code`,
 * `error.type`) and the object's kind and key. With `annotate`, a create
 * and a `createOrUpdate` that writes carry the run's trace context in
 * `rxkube.io/traceparent`; nothing else is stamped, so the annotation never
 * turns a write that would change nothing (an `apply`, `update` or patch
 * sent each run) into one that changes the object, which would set off a
 * watch event and another reconcile.
 */
export class SpanClient extends ForwardingClient {
  constructor(
    inner: KubeClient,
    private readonly options: SpanClientOptions,
  ) {
    super(inner);
  }

  protected override around(call: KubeCall): Promise<unknown> {
    return this.span(call);
  }

  /** Sends `call` on, the trace context of `span` stamped where a create or a `createOrUpdate` writes anyway. */
  private sent(call: KubeCall, span: Span): Promise<unknown> {
    if (call.method === 'create') return this.inner.create(this.stamped(call.object, span), call.options);
    if (call.method === 'createOrUpdate') return this.inner.createOrUpdate(call.object, this.stamping(call.mutate, span), call.options);
    return this.forward(call);
  }

  /** A copy of `object` that carries the trace context of `span`, when annotating. */
  private stamped<T extends KubeObject>(object: T, span: Span): T {
    if (!this.options.annotate || object === null || typeof object !== 'object' || object.metadata === null || typeof object.metadata !== 'object') return object;
    const annotations = { ...object.metadata.annotations, [TRACEPARENT_ANNOTATION]: formatTraceparent(span.spanContext()) };
    return { ...object, metadata: { ...object.metadata, annotations } };
  }

  /**
   * `mutate`, and the trace context stamped on its result only when the
   * write happens anyway: the object to create (it has no uid yet), or a
   * stored one that `mutate` changed. The client compares the result with
   * what is stored, so an unchanged object stays unchanged and unwritten.
   */
  private stamping<T extends KubeObject>(mutate: Mutate<T>, span: Span): Mutate<T> {
    if (!this.options.annotate) return mutate;
    return async (current) => {
      const before = cloneJson(current);
      const result = await mutate(current);
      const next = result === undefined ? current : result;
      if (next !== null && typeof next === 'object' && (before.metadata?.uid === undefined || !jsonEqual(before, next))) return this.stamped(next, span);
      return next;
    };
  }

  private span(call: KubeCall): Promise<unknown> {
    const verb = call.method;
    const target = targetOf(call);
    const { resource, objectKey } = addressed(target);
    const method = METHODS[verb] ?? 'GET';
    const parent = this.options.parent();
    const attributes: Attributes = { 'http.request.method': method, 'rxkube.request.verb': verb, 'rxkube.object.kind': resource };
    if (objectKey !== undefined) attributes['rxkube.object.key'] = objectKey;
    const span = this.options.tracer.startSpan(
      `${method} ${resource}`,
      { kind: SpanKind.CLIENT, startTime: this.options.now(), attributes },
      parent === undefined ? ROOT_CONTEXT : trace.setSpan(ROOT_CONTEXT, parent),
    );
    let answer: Promise<unknown>;
    try {
      answer = this.sent(call, span);
    } catch (err) {
      this.end(span, target, verb, 0, err);
      throw err;
    }
    return answer.then(
      (value) => {
        this.end(span, target, verb, answerCode(verb, value), undefined, value);
        return value;
      },
      (err: unknown) => {
        this.end(span, target, verb, statusOf(err), err);
        throw err;
      },
    );
  }

  /** Ends `span` with the answer's status, named by its URL template once the kind's resource is known (discovery, cached by the call itself). */
  private end(span: Span, target: ObjectTarget | ListTarget, verb: string, code: number, error: unknown, value?: unknown): void {
    const at = this.options.now();
    const method = writtenMethod(verb, value);
    span.setAttribute('http.request.method', method);
    if (code > 0) span.setAttribute('http.response.status_code', code);
    // 404 of a remove is its `absent` answer, no failure.
    if (error !== undefined || code >= 400) {
      span.setAttribute('error.type', code > 0 ? String(code) : error instanceof Error ? error.name : 'Error');
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    }
    const apiVersion = typeof target?.apiVersion === 'string' ? target.apiVersion : '';
    const kind = typeof target?.kind === 'string' ? target.kind : '';
    const named = (info: ResourceInfo | undefined): void => {
      if (info !== undefined) {
        const template = urlTemplate(info, verb, method, target);
        span.setAttribute('url.template', template);
        span.updateName(`${method} ${template}`);
      }
      span.end(at);
    };
    if (verb === 'resource' || apiVersion === '' || kind === '') return named(undefined);
    this.inner.resource(apiVersion, kind).then(named, () => named(undefined));
  }
}

/** The method of the last request a call sent: a `createOrUpdate` that created sent a POST; one that changed nothing, only its GET. */
function writtenMethod(verb: string, value: unknown): string {
  const result = value !== null && typeof value === 'object' && 'result' in value ? value.result : undefined;
  if (verb === 'createOrUpdate' && result === 'created') return 'POST';
  if ((verb === 'createOrUpdate' || verb === 'updateStatus') && result === 'unchanged') return 'GET';
  return METHODS[verb] ?? 'GET';
}

/** The request's path with the namespace and name as placeholders (`/apis/apps/v1/namespaces/{namespace}/deployments/{name}`). */
function urlTemplate(info: ResourceInfo, verb: string, method: string, target: ObjectTarget | ListTarget): string {
  const root = info.group === '' ? `/api/${info.version}` : `/apis/${info.group}/${info.version}`;
  const meta = target !== null && typeof target === 'object' && 'metadata' in target && target.metadata !== null && typeof target.metadata === 'object' ? target.metadata : (target as { namespace?: unknown });
  const inNamespace = info.namespaced && typeof meta.namespace === 'string' && meta.namespace !== '';
  const collection = `${root}${inNamespace ? '/namespaces/{namespace}' : ''}/${info.resource}`;
  if (verb === 'list' || method === 'POST') return collection;
  const status = verb === 'updateStatus' || verb === 'patchStatus' ? '/status' : '';
  return `${collection}/{name}${status}`;
}

/** The HTTP status of a failed call: a `KubeApiError`'s `code` (read by shape: what observes a controller imports no client code), else 0. */
function statusOf(err: unknown): number {
  const code = err instanceof Error && 'code' in err ? err.code : undefined;
  return typeof code === 'number' && Number.isInteger(code) && code >= 100 && code < 600 ? code : 0;
}
