import type { RequestInfo } from '../faults.js';

/**
 * One request as the server saw it, so tests can assert what a client did
 * ("no re-list happened", "the watch resumed from resourceVersion 12").
 */
export interface RequestLogEntry extends Omit<RequestInfo, 'kind' | 'apply'> {
  /** The HTTP method (`GET`, `PATCH`, ...). */
  method: string;
  /** The path, without the query. */
  path: string;
  /** Query parameters (the first value of each). */
  query: Record<string, string>;
  /** The HTTP status sent; 0 while no response head has been written. */
  status: number;
  /** Milliseconds since the server started, when the request arrived. */
  at: number;
}

/** A bounded log of requests, oldest first. */
export class RequestLog {
  private entries: RequestLogEntry[] = [];

  constructor(private readonly capacity = 10_000) {}

  add(entry: RequestLogEntry): void {
    this.entries.push(entry);
    if (this.entries.length > this.capacity) this.entries.splice(0, this.entries.length - this.capacity);
  }

  all(): readonly RequestLogEntry[] {
    return this.entries;
  }

  clear(): void {
    this.entries = [];
  }
}
