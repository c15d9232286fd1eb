import type { ServerResponse } from 'node:http';
import type { Logger } from '../../logger.js';
import type { Cluster, WriteGuard } from '../cluster.js';
import { servesStoredForm, toVersion } from '../api/conversion.js';
import type { Faults, RequestFaults } from '../faults.js';
import type { StoredObject } from '../storage/objectStore.js';
import type { RequestLogEntry } from './requestLog.js';
import type { ResourceType } from '../api/resourceType.js';

/** What every handler of a resource request gets. */

export interface ServerContext {
  readonly cluster: Cluster;
  readonly faults: RequestFaults;
  readonly bookmarkIntervalMs: number;
  readonly logger: Logger;
  /** Whether lists and watches honour `shardSelector` (KEP-5866's `ShardedListAndWatch` gate). */
  readonly shardedListAndWatch: boolean;
}

/** The headers the server reads, whether the request came over HTTP or from an in-process client. */
export interface RequestHeaders {
  readonly accept?: string;
  readonly contentType?: string;
  readonly userAgent?: string;
  readonly authorization?: string;
  /** `Impersonate-User` and `Impersonate-Group` (read only with RBAC on). */
  readonly impersonateUser?: string;
  readonly impersonateGroups?: readonly string[];
}

/** A request addressed to one resource, with everything its handler reads. */
export interface ResourceRequest {
  readonly server: ServerContext;
  readonly method: string;
  readonly headers: RequestHeaders;
  readonly query: URLSearchParams;
  readonly type: ResourceType;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly subresource: string | undefined;
  readonly verb: string;
  readonly log: RequestLogEntry;
  /** Warnings for the client, sent as `Warning: 299 - "..."` headers. */
  readonly warnings: string[];
  /** The requester's check of what its write stores (RBAC escalation), when it has one. */
  readonly guard?: WriteGuard;
}

/** A request with a body, read in full (empty when it has none). */
export interface BodyRequest extends ResourceRequest {
  readonly body: Buffer;
}

/** A watch: the only answer written as it goes, so it holds the HTTP response itself. */
export interface WatchRequest extends ResourceRequest {
  readonly res: ServerResponse;
  /** The faults of the server's watches (silenced, 410 as HTTP). */
  readonly watchFaults: Faults;
}

/** The `Warning` headers for a request's warnings (kube's format: code 299, agent "-"). */
export function warningHeaders(warnings: readonly string[]): Record<string, string[]> {
  return warnings.length === 0 ? {} : { Warning: warnings.map((w) => `299 - ${JSON.stringify(w)}`) };
}

/** An object as JSON in the version `type` serves (the stored JSON when no conversion is needed). */
export function objectJson(type: ResourceType, stored: StoredObject): string {
  return servesStoredForm(type, stored) ? stored.json : JSON.stringify(toVersion(type, stored.object));
}
