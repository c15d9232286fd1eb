import type { ObjectStore } from './storage/objectStore.js';
import { statusFor, type ApiError } from './api/statusError.js';
import type { WatchHub } from './watch/watchHub.js';

/**
 * Faults on demand, for testing clients against what real clusters do:
 * dropped and cleanly closed watches, compacted history (410), throttling
 * (429 + Retry-After), server errors, persistent 403s, slow responses,
 * silent watches and garbage on the wire.
 */

/** Which requests a fault applies to; every field given must match. */
export interface RequestMatch {
  /** kube's verb: get, list, watch, create, update, patch, delete, deletecollection (or discovery, openapi, version). */
  verb?: string;
  /** The plural resource, e.g. `pods`; `pods/status` names a subresource. */
  resource?: string;
  namespace?: string;
  /** The API group (`''` for core). */
  group?: string;
}

export interface FaultAnswer {
  status: number;
  reason?: string;
  message?: string;
  /** Sent as the `Retry-After` header and in `details.retryAfterSeconds` (429 defaults to 1). */
  retryAfterSeconds?: number;
}

/** What a request is, for matching faults and for the request log. */
export interface RequestInfo {
  verb: string;
  resource?: string;
  subresource?: string;
  group?: string;
  namespace?: string;
}

function matches(match: RequestMatch | undefined, info: RequestInfo): boolean {
  if (match === undefined) return true;
  if (match.verb !== undefined && match.verb !== info.verb) return false;
  if (match.group !== undefined && match.group !== info.group) return false;
  if (match.namespace !== undefined && match.namespace !== info.namespace) return false;
  if (match.resource !== undefined) {
    const full = info.subresource === undefined ? info.resource : `${info.resource}/${info.subresource}`;
    if (match.resource !== info.resource && match.resource !== full) return false;
  }
  return true;
}

function sameMatch(a: RequestMatch | undefined, b: RequestMatch | undefined): boolean {
  return JSON.stringify(a ?? {}) === JSON.stringify(b ?? {});
}

export class Faults {
  private failures: { remaining: number; answer: FaultAnswer; match?: RequestMatch }[] = [];
  private forbidden: RequestMatch[] = [];
  private delays: { ms: number; match?: RequestMatch }[] = [];
  private silenced = false;
  private watch410AsHttp = false;

  constructor(
    private readonly hub: WatchHub,
    private readonly store: ObjectStore,
  ) {}

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

  /** Answers the next `n` matching requests with `answer` (a Status of that code). */
  failNext(n: number, answer: FaultAnswer, match?: RequestMatch): void {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`failNext needs a positive number of requests, got ${n}`);
    this.failures.push({ remaining: n, answer, match });
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

  /** Keeps open watches (and new ones) open but silent: no events, no bookmarks, until `unsilence`. */
  silenceWatches(): void {
    this.silenced = true;
    for (const w of this.hub.all()) w.stream.setSilenced(true);
  }

  /** Ends the silence; events held meanwhile are sent. */
  unsilence(): void {
    this.silenced = false;
    for (const w of this.hub.all()) w.stream.setSilenced(false);
  }

  unsilenceWatches(): void {
    this.unsilence();
  }

  get watchesSilenced(): boolean {
    return this.silenced;
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

  get expiredWatchAsHttp(): boolean {
    return this.watch410AsHttp;
  }

  /** Clears every fault (open watches stay open, unsilenced). */
  reset(): void {
    this.failures = [];
    this.forbidden = [];
    this.delays = [];
    this.watch410AsHttp = false;
    if (this.silenced) this.unsilence();
  }

  /** The delay for a request, in ms. */
  delayFor(info: RequestInfo): number {
    let ms = 0;
    for (const d of this.delays) if (matches(d.match, info)) ms = Math.max(ms, d.ms);
    return ms;
  }

  /** The injected error a request gets, if any (consuming one `failNext`). */
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
    failure.remaining -= 1;
    if (failure.remaining <= 0) this.failures = this.failures.filter((f) => f !== failure);
    return statusFor(failure.answer.status, failure.answer);
  }
}
