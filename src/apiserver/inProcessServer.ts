import { silentLogger } from '../logger.js';
import { Cluster, type ClusterOptions } from './cluster.js';
import { RequestFaults } from './faults.js';
import type { ApiResponse } from './http/httpIo.js';
import { prepare, refusal, serveAdmitted, type ApiRequest, type ExchangeContext, type PreparedRequest } from './http/exchange.js';
import { RequestLog } from './http/requestLog.js';
import { Access } from './auth/access.js';

export type InProcessServerOptions = Partial<ClusterOptions>;

/** How one request went: what the server answered, and whether an injected fault answered it. */
export interface InProcessAnswer {
  readonly response: ApiResponse;
  readonly injected: boolean;
}

/**
 * The embedded API server without HTTP: the same cluster, routes, faults,
 * validation, writes and Status errors, for clients in the same process
 * (`rxkube/testing`'s memory client and in-memory lease client). Requests
 * are answered synchronously, so in virtual time they take no time unless a
 * caller waits on its scheduler. Watches are not served here: an in-process
 * watch follows the cluster's changes directly.
 */
export class InProcessServer {
  readonly cluster: Cluster;
  readonly faults = new RequestFaults();
  readonly requestLog = new RequestLog();
  private readonly ctx: ExchangeContext;

  constructor(options: InProcessServerOptions = {}) {
    const logger = options.logger ?? silentLogger;
    this.cluster = new Cluster({ historyWindow: 10_000, ...options, logger });
    const now = this.cluster.now;
    this.ctx = {
      cluster: this.cluster,
      faults: this.faults,
      bookmarkIntervalMs: 60_000,
      shardedListAndWatch: true,
      logger,
      token: undefined,
      // No RBAC in process: its clients (rxkube/testing's memory clients) carry no identity.
      access: new Access(this.cluster, { rbac: false, token: undefined }),
      requestLog: this.requestLog,
      now,
      startedAt: now(),
      address: () => 'in-process',
    };
  }

  /** Routes a request and logs it; `faults.delayFor(prepared.info)` then says how long it should take. */
  prepare(request: ApiRequest): PreparedRequest {
    return prepare(this.ctx, request);
  }

  /** Answers a prepared request; with `faulty` false it meets no injected fault. Never throws. */
  answer(prepared: PreparedRequest, body: Buffer, faulty = true): InProcessAnswer {
    const refused = faulty ? refusal(this.ctx, prepared) : undefined;
    if (refused !== undefined) return { response: refused, injected: true };
    return { response: serveAdmitted(this.ctx, prepared, body), injected: false };
  }

  /** Cancels follow-up work the cluster scheduled for later. */
  close(): void {
    this.ctx.access.close();
    this.cluster.close();
  }
}
