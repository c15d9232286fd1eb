import type { KubeObject, Typed } from '../../types.js';
import type {
  ApplyOptions,
  CallOptions,
  JsonPatchOperation,
  KubeClient,
  ListOptions,
  ListTarget,
  ObjectTarget,
  RemoveOptions,
  RemoveResult,
  WriteOptions,
} from './kubeClient.js';
import type { Mutate, WriteResult } from './readModifyWrite.js';
import type { ResourceInfo } from './resources.js';

/**
 * The arguments of each `KubeClient` method, by name, as flat fields (one
 * object a call, no arguments array). Indexed below by every key of
 * `KubeClient`, so a method added to the client without its entry here
 * fails to compile.
 */
interface CallArguments {
  get: { readonly target: ObjectTarget; readonly options: CallOptions | undefined };
  create: { readonly object: KubeObject; readonly options: WriteOptions | undefined };
  update: { readonly object: KubeObject; readonly options: WriteOptions | undefined };
  apply: { readonly object: KubeObject; readonly options: ApplyOptions | undefined };
  createOrUpdate: { readonly object: KubeObject; readonly mutate: Mutate<KubeObject>; readonly options: WriteOptions | undefined };
  patchMerge: { readonly target: ObjectTarget; readonly patch: object; readonly options: WriteOptions | undefined };
  patchJson: { readonly target: ObjectTarget; readonly operations: readonly JsonPatchOperation[]; readonly options: WriteOptions | undefined };
  updateStatus: { readonly object: KubeObject; readonly mutate: Mutate<KubeObject> | undefined; readonly options: WriteOptions | undefined };
  patchStatus: { readonly target: ObjectTarget; readonly patch: object | readonly JsonPatchOperation[]; readonly options: WriteOptions | undefined };
  remove: { readonly target: ObjectTarget; readonly options: RemoveOptions | undefined };
  list: { readonly target: ListTarget; readonly options: ListOptions | undefined };
  resource: { readonly apiVersion: string; readonly kind: string; readonly options: CallOptions | undefined };
}

/** The name of a `KubeClient` method. */
export type KubeMethod = keyof KubeClient;

/**
 * One call of any `KubeClient` method: its name (`method`, the
 * discriminant) and its arguments, typed per method. The object types are
 * the methods' bounds (`KubeObject`): a decorator sees every call alike
 * and hands the answer back as the caller's `T`.
 */
export type KubeCall = { [M in KubeMethod]: { readonly method: M } & CallArguments[M] }[KubeMethod];

/** The call of one method. */
export type KubeCallOf<M extends KubeMethod> = Extract<KubeCall, { method: M }>;

/**
 * What a call addressed, for naming it: the object or reference it names,
 * the list's target, or for `resource` the call itself (it carries the
 * `apiVersion` and `kind`, and nothing else a target has, so no object is
 * made for it).
 */
export function targetOf(call: KubeCall): ObjectTarget | ListTarget {
  switch (call.method) {
    case 'create':
    case 'update':
    case 'apply':
    case 'createOrUpdate':
    case 'updateStatus':
      return call.object;
    case 'resource':
      return call;
    default:
      return call.target;
  }
}

/**
 * A `KubeClient` that hands every call, as a `KubeCall`, to `around`,
 * whose default sends it on to `inner` unchanged (`forward`). The client's
 * decorators (the timeline's, the spans', read-your-own-writes') extend it
 * and override `around` alone, looking at `call.method` where only some
 * calls matter to them. Why: a method added to `KubeClient` is then added
 * in one place (here: the method, its `CallArguments` entry and its case in
 * `forward`, each of which the compiler asks for), and no decorator can
 * forget to pass it through or to observe it. The call is one flat object,
 * no closure and no arguments array, to keep what a decorated call
 * allocates low.
 */
export abstract class ForwardingClient implements KubeClient {
  constructor(protected readonly inner: KubeClient) {}

  /** What the decorator does with a call; by default, nothing but sending it on. */
  protected around(call: KubeCall): Promise<unknown> {
    return this.forward(call);
  }

  /** Sends `call` to the inner client, as it came; a throw or rejection of the inner client reaches the caller as it is. */
  protected forward(call: KubeCall): Promise<unknown> {
    const inner = this.inner;
    switch (call.method) {
      case 'get':
        return inner.get(call.target, call.options);
      case 'create':
        return inner.create(call.object, call.options);
      case 'update':
        return inner.update(call.object, call.options);
      case 'apply':
        return inner.apply(call.object, call.options);
      case 'createOrUpdate':
        return inner.createOrUpdate(call.object, call.mutate, call.options);
      case 'patchMerge':
        return inner.patchMerge(call.target, call.patch, call.options);
      case 'patchJson':
        return inner.patchJson(call.target, call.operations, call.options);
      case 'updateStatus':
        return inner.updateStatus(call.object, call.mutate, call.options);
      case 'patchStatus':
        return inner.patchStatus(call.target, call.patch, call.options);
      case 'remove':
        return inner.remove(call.target, call.options);
      case 'list':
        return inner.list(call.target, call.options);
      case 'resource':
        return inner.resource(call.apiVersion, call.kind, call.options);
      default:
        return unknownMethod(call);
    }
  }

  // Each method names its call and casts the answer back to the caller's type: `forward` answered with the inner client's own.
  get<T extends KubeObject>(target: ObjectTarget<T>, options?: CallOptions): Promise<T> {
    return this.around({ method: 'get', target, options }) as Promise<T>;
  }
  create<T extends KubeObject>(object: T, options?: WriteOptions): Promise<T> {
    return this.around({ method: 'create', object, options }) as Promise<T>;
  }
  update<T extends KubeObject>(object: T, options?: WriteOptions): Promise<T> {
    return this.around({ method: 'update', object, options }) as Promise<T>;
  }
  apply<T extends KubeObject>(object: T, options?: ApplyOptions): Promise<T> {
    return this.around({ method: 'apply', object, options }) as Promise<T>;
  }
  createOrUpdate<T extends KubeObject>(object: T, mutate: Mutate<T>, options?: WriteOptions): Promise<WriteResult<T>> {
    return this.around({ method: 'createOrUpdate', object, mutate: widened(mutate), options }) as Promise<WriteResult<T>>;
  }
  patchMerge<T extends KubeObject>(target: ObjectTarget<T>, patch: object, options?: WriteOptions): Promise<T> {
    return this.around({ method: 'patchMerge', target, patch, options }) as Promise<T>;
  }
  patchJson<T extends KubeObject>(target: ObjectTarget<T>, operations: readonly JsonPatchOperation[], options?: WriteOptions): Promise<T> {
    return this.around({ method: 'patchJson', target, operations, options }) as Promise<T>;
  }
  updateStatus<T extends KubeObject>(object: T, mutate?: Mutate<T>, options?: WriteOptions): Promise<WriteResult<T>> {
    return this.around({ method: 'updateStatus', object, mutate: mutate === undefined ? undefined : widened(mutate), options }) as Promise<WriteResult<T>>;
  }
  patchStatus<T extends KubeObject>(target: ObjectTarget<T>, patch: object | readonly JsonPatchOperation[], options?: WriteOptions): Promise<T> {
    return this.around({ method: 'patchStatus', target, patch, options }) as Promise<T>;
  }
  remove<T extends KubeObject>(target: ObjectTarget<T>, options?: RemoveOptions): Promise<RemoveResult<T>> {
    return this.around({ method: 'remove', target, options }) as Promise<RemoveResult<T>>;
  }
  list<T extends KubeObject>(target: ListTarget & Typed<T>, options?: ListOptions): Promise<T[]> {
    return this.around({ method: 'list', target, options }) as Promise<T[]>;
  }
  resource(apiVersion: string, kind: string, options?: CallOptions): Promise<ResourceInfo> {
    return this.around({ method: 'resource', apiVersion, kind, options }) as Promise<ResourceInfo>;
  }
}

/**
 * `mutate` as a call holds it. The inner client runs it on the object the
 * caller passed (a `T`) or on the stored one of the same kind, so taking
 * it as a mutation of any object never hands it another type.
 */
function widened<T extends KubeObject>(mutate: Mutate<T>): Mutate<KubeObject> {
  return mutate as unknown as Mutate<KubeObject>;
}

/** Reached only if a call's `method` is none of the client's: the compiler checks `forward` covers them all. */
function unknownMethod(call: never): never {
  throw new TypeError(`not a KubeClient method: ${String((call as { method?: unknown }).method)}`);
}
