import { jsonEqual } from '../util/json.js';
import type { ObjectStore } from './storage/objectStore.js';
import { conflict, notFound, statusFor, type ApiError } from './api/statusError.js';
import type { WatchHub } from './watch/watchHub.js';

/**
 * Faults on demand, for testing clients against what real clusters do.
 * `RequestFaults` answers requests instead of the server (throttling with
 * Retry-After, server errors, conflicts, persistent 403s, slow responses);
 * the HTTP server and the in-memory clients of `rxkube/testing` share it,
 * so a fault reads and matches the same way for both. `Faults`, the HTTP
 * server's, adds what only real watches have: dropped and cleanly closed
 * watches, compacted history (410), silent watches and garbage on the wire.
 */

/** Which requests a fault applies to; every field given must match. */
export interface RequestMatch {
  /**
   * kube's verb (`get`, `list`, `watch`, `create`, `update`, `patch`,
   * `delete`, `deletecollection`, or `discovery`, `openapi`, `version`), or
   * `apply` for a server-side apply (a `patch` to kube), or a list of them.
   * Default: every request.
   */
  verb?: string | readonly string[];
  /** The API group (`''` for core). */
  group?: string;
  /** The plural resource, e.g. `pods`; `pods/status` names a subresource. */
  resource?: string;
  /** The subresource (`status`, `scale`), or `''` for requests to the object itself. */
  subresource?: string;
  /** The kind of the resource addressed (`Deployment`). */
  kind?: string;
  /** The namespace of the object addressed. */
  namespace?: string;
  /** The object's name (requests that name one). */
  name?: string;
}

/** What a faulty request is answered with, and which requests it takes. */
export interface Fault extends RequestMatch {
  /** The HTTP status code, 400 to 599 (409, 429, 500, …). */
  code: number;
  /** The Status reason; default kube's for the code (`Conflict`, `InternalError`, …). */
  reason?: string;
  /** Default: kube's wording for the code (a 409 for a named object reads like a stale-resourceVersion conflict). */
  message?: string;
  /** Sent as the `Retry-After` header and in `details.retryAfterSeconds` (a 429 defaults to 1). */
  retryAfterSeconds?: number;
}

/** What a request is, for matching faults and for the request log. */
export interface RequestInfo {
  /** kube's verb (get, list, watch, create, update, patch, delete, deletecollection) or discovery, openapi, version, health, unknown. */
  verb: string;
  /** The API group (`''` for the core group). */
  group?: string;
  /** The API version (`v1`). */
  version?: string;
  /** The resource, plural (`configmaps`). */
  resource?: string;
  /** The subresource (`status`, `scale`), or `''` for the object itself. */
  subresource?: string;
  /** The namespace of the request, if it names one. */
  namespace?: string;
  /** The object's name, for requests that name one. */
  name?: string;
  /** The kind of the resource addressed (`ConfigMap`). */
  kind?: string;
  /** A server-side apply (`verb` is `patch`): a match on `apply` takes it too. */
  apply?: boolean;
}

function verbMatches(verb: RequestMatch['verb'], info: RequestInfo): boolean {
  if (verb === undefined) return true;
  const verbs: readonly string[] = typeof verb === 'string' ? [verb] : verb;
  return verbs.includes(info.verb) || (info.apply === true && verbs.includes('apply'));
}

function matches(match: RequestMatch | undefined, info: RequestInfo): boolean {
  if (match === undefined) return true;
  if (!verbMatches(match.verb, info)) return false;
  if (match.group !== undefined && match.group !== info.group) return false;
  if (match.namespace !== undefined && match.namespace !== info.namespace) return false;
  if (match.name !== undefined && match.name !== info.name) return false;
  if (match.kind !== undefined && match.kind !== info.kind) return false;
  if (match.subresource !== undefined && match.subresource !== (info.subresource ?? '')) return false;
  if (match.resource !== undefined) {
    const full = info.subresource === undefined ? info.resource : `${info.resource}/${info.subresource}`;
    if (match.resource !== info.resource && match.resource !== full) return false;
  }
  return true;
}

function matchOf(fault: RequestMatch): RequestMatch {
  const { verb, group, resource, subresource, kind, namespace, name } = fault;
  return { verb, group, resource, subresource, kind, namespace, name };
}

function sameMatch(a: RequestMatch | undefined, b: RequestMatch | undefined): boolean {
  return jsonEqual(a ?? {}, b ?? {});
}

function checkFault(count: number, fault: Fault): void {
  if (!Number.isInteger(count) || count < 1) throw new RangeError(`failNext needs a count of at least 1, got ${String(count)}`);
  if (fault === null || typeof fault !== 'object' || !Number.isInteger(fault.code) || fault.code < 400 || fault.code > 599) {
    throw new RangeError(`a fault needs an HTTP error code from 400 to 599, got ${JSON.stringify((fault as Partial<Fault> | null)?.code)}`);
  }
}

/** The Status a fault answers, worded for the request it hit. */
function errorFor(fault: Fault, info: RequestInfo): ApiError {
  const gr = { group: info.group ?? '', resource: info.resource ?? '' };
  const plain = fault.reason === undefined && fault.message === undefined && fault.retryAfterSeconds === undefined;
  if (plain && info.name !== undefined && info.resource !== undefined) {
    if (fault.code === 409) return conflict(gr, info.name);
    if (fault.code === 404) return notFound(gr, info.name);
  }
  return statusFor(fault.code, {
    ...(fault.reason !== undefined ? { reason: fault.reason } : {}),
    ...(fault.message !== undefined ? { message: fault.message } : {}),
    ...(fault.retryAfterSeconds !== undefined ? { retryAfterSeconds: fault.retryAfterSeconds } : {}),
  });
}

/** Faults that answer requests: shared by the HTTP server and the in-memory clients. */
export class RequestFaults {
  private failures: { left: number; fault: Fault; match: RequestMatch }[] = [];
  private forbidden: RequestMatch[] = [];
  private delays: { ms: number; match?: RequestMatch }[] = [];

  /**
   * Answers the next `count` requests that `fault` matches (every request
   * when it names none of `verb`, `resource`, …) with its code, instead of
   * serving them. Faults are used in the order they were added.
   */
  failNext(count: number, fault: Fault): void {
    checkFault(count, fault);
    this.failures.push({ left: count, fault, match: matchOf(fault) });
  }

  /** Requests that faults added with `failNext` still wait to answer. */
  pending(): number {
    return this.failures.reduce((n, f) => n + f.left, 0);
  }

  /** Answers every matching request with 403 Forbidden until `allow` lifts it. */
  forbid(match: RequestMatch): void {
    this.forbidden.push(match);
  }

  /** Lifts `forbid(match)` (the same match), or every forbid when called without one. */
  allow(match?: RequestMatch): void {
    this.forbidden = match === undefined ? [] : this.forbidden.filter((m) => !sameMatch(m, match));
  }

  /** Delays matching responses by `ms` (0 removes the delay set for that match). */
  latency(ms: number, match?: RequestMatch): void {
    this.delays = this.delays.filter((d) => !sameMatch(d.match, match));
    if (ms > 0) this.delays.push({ ms, match });
  }

  /** Clears every request fault. */
  reset(): void {
    this.failures = [];
    this.forbidden = [];
    this.delays = [];
  }

  /** The delay for a request, in ms. */
  delayFor(info: RequestInfo): number {
    let ms = 0;
    for (const d of this.delays) if (matches(d.match, info)) ms = Math.max(ms, d.ms);
    return ms;
  }

  /** The injected error a request gets, if any (using up one `failNext`). */
  errorFor(info: RequestInfo): ApiError | undefined {
    if (this.forbidden.some((m) => matches(m, info))) {
      const what = info.resource === undefined ? 'this path' : `resource "${info.resource}" in API group "${info.group ?? ''}"`;
      const where = info.namespace === undefined ? '' : ` in the namespace "${info.namespace}"`;
      const subject = info.resource === undefined ? '' : info.group ? `${info.resource}.${info.group} ` : `${info.resource} `;
      return statusFor(403, {
        message: `${subject}is forbidden: User "system:anonymous" cannot ${info.verb} ${what}${where}`,
        details: info.resource === undefined ? undefined : { kind: info.resource, ...(info.group ? { group: info.group } : {}) },
      });
    }
    const failure = this.failures.find((f) => matches(f.match, info));
    if (failure === undefined) return undefined;
    failure.left -= 1;
    if (failure.left <= 0) this.failures = this.failures.filter((f) => f !== failure);
    return errorFor(failure.fault, info);
  }
}

/** The HTTP server's faults: those of every request, and those of its watches. */
export class Faults extends RequestFaults {
  private silenced = false;
  private watch410AsHttp = false;
  private watchDelays: { ms: number; match?: RequestMatch }[] = [];

  constructor(
    private readonly hub: WatchHub,
    private readonly store: ObjectStore,
  ) {
    super();
  }

  /** Cuts every open watch mid-stream (the socket is destroyed). Returns how many. */
  dropWatches(): number {
    const watchers = this.hub.all();
    for (const w of watchers) w.stream.destroy();
    return watchers.length;
  }

  /** Ends every open watch cleanly, as a server-side timeout does. Returns how many. */
  closeWatches(): number {
    const watchers = this.hub.all();
    for (const w of watchers) w.stream.end();
    return watchers.length;
  }

  /** Forgets all history: watches and continue tokens from older resourceVersions get 410 Expired. */
  compact(): void {
    this.store.compact();
  }

  /** Keeps open watches (and new ones) open but silent: no events, no bookmarks, until `unsilenceWatches`. */
  silenceWatches(): void {
    this.silenced = true;
    for (const w of this.hub.all()) w.stream.setSilenced(true);
  }

  /** Ends the silence; events held meanwhile are sent. */
  unsilenceWatches(): void {
    this.silenced = false;
    for (const w of this.hub.all()) w.stream.setSilenced(false);
  }

  /** Whether open watches are silenced now (`silenceWatches()`). */
  get watchesSilenced(): boolean {
    return this.silenced;
  }

  /**
   * Delays every line of matching watches (events and bookmarks, in order)
   * by `ms`, open watches and new ones alike: a watch that lags behind the
   * writes, as a loaded API server's or a slow network's does, while the
   * writes themselves are answered at once. 0 removes the delay set for
   * that match. A watch that closes drops what it still held back, as a
   * cut connection would.
   */
  delayWatchEvents(ms: number, match?: RequestMatch): void {
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) throw new RangeError(`delayWatchEvents needs a finite number of ms >= 0, got ${String(ms)}`);
    this.watchDelays = this.watchDelays.filter((d) => !sameMatch(d.match, match));
    if (ms > 0) this.watchDelays.push({ ms, match });
  }

  /** How long the lines of a watch `info` describes are held back, in ms (`delayWatchEvents`). */
  watchDelayFor(info: RequestInfo): number {
    let ms = 0;
    for (const d of this.watchDelays) if (matches(d.match, { ...info, verb: 'watch' })) ms = Math.max(ms, d.ms);
    return ms;
  }

  /** Writes a line that is not JSON into every open watch. Returns how many. */
  malformedLine(text = 'this is not a watch event {'): number {
    const watchers = this.hub.all();
    for (const w of watchers) w.stream.writeRaw(`${text}\n`);
    return watchers.length;
  }

  /**
   * Kube answers a watch from an expired resourceVersion either with a 200
   * and an ERROR event (the watch cache) or with HTTP 410 (etcd); this picks.
   */
  watch410AsHttpStatus(on: boolean): void {
    this.watch410AsHttp = on;
  }

  /** Whether an expired watch is answered with HTTP 410 (`watch410AsHttpStatus(true)`) rather than an ERROR event. */
  get expiredWatchAsHttp(): boolean {
    return this.watch410AsHttp;
  }

  /** Clears every fault (open watches stay open, unsilenced). */
  override reset(): void {
    super.reset();
    this.watch410AsHttp = false;
    this.watchDelays = [];
    if (this.silenced) this.unsilenceWatches();
  }
}
