import { request } from 'node:http';
import { ApiextensionsV1Api, AppsV1Api, CoreV1Api, CustomObjectsApi, type V1CustomResourceDefinition, type V1ObjectMeta, type V1Pod, type V1PodSpec } from '@kubernetes/client-node';
import { silentLogger } from 'rxkube';
import { startApiServer, type ApiServer, type ApiServerOptions } from 'rxkube/testing';

/** Shared helpers of the embedded API server's integration tests: raw HTTP, watch readers, waiting. */

export async function start(options: ApiServerOptions = {}): Promise<ApiServer> {
  return startApiServer({ logger: silentLogger, ...options });
}

/** A server and the generated clients the tests use against it. */
export interface Clients {
  server: ApiServer;
  core: CoreV1Api;
  apps: AppsV1Api;
  extensions: ApiextensionsV1Api;
  custom: CustomObjectsApi;
}

export async function startWithClients(options: ApiServerOptions = {}): Promise<Clients> {
  const server = await start(options);
  const kc = server.kubeConfig();
  return {
    server,
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    extensions: kc.makeApiClient(ApiextensionsV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: () => Record<string, unknown>;
}

/** One HTTP request with node:http, for what the generated clients cannot send (bad bodies, odd headers). */
export function raw(
  server: ApiServer,
  method: string,
  path: string,
  options: { body?: string | Buffer; headers?: Record<string, string> } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(`${server.url}${path}`, { method, headers: options.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) as Record<string, unknown> });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

export function json(server: ApiServer, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<RawResponse> {
  return raw(server, method, path, {
    body: body === undefined ? undefined : JSON.stringify(body),
    headers: body === undefined ? {} : { 'Content-Type': contentType },
  });
}

/** Polls `check` until it returns a value other than undefined/false, or fails after `ms`. */
export async function eventually<T>(check: () => T | undefined | false | Promise<T | undefined | false>, ms = 5000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export interface WatchLine {
  type: string;
  object: { kind?: string; apiVersion?: string; metadata?: { name?: string; resourceVersion?: string; annotations?: Record<string, string> }; code?: number; reason?: string; [key: string]: unknown };
}

/**
 * A watch read with node:http, line by line, keeping every event (and any
 * line that is not JSON) so tests can assert the exact stream.
 */
export class RawWatch {
  readonly events: WatchLine[] = [];
  readonly badLines: string[] = [];
  status = 0;
  headers: Record<string, string | string[] | undefined> = {};
  body = '';
  /** 'end' for a clean end of the chunked response, 'aborted' when the connection was cut. */
  ended: Promise<'end' | 'aborted'>;
  private readonly req;
  private resolveEnd!: (how: 'end' | 'aborted') => void;
  readonly opened: Promise<void>;

  constructor(server: ApiServer, path: string, headers: Record<string, string> = {}) {
    this.ended = new Promise((resolve) => (this.resolveEnd = resolve));
    let opened!: () => void;
    this.opened = new Promise((resolve) => (opened = resolve));
    this.req = request(`${server.url}${path}`, { headers }, (res) => {
      this.status = res.statusCode ?? 0;
      this.headers = res.headers;
      opened();
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        this.body += chunk;
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf('\n')) !== -1) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (line === '') continue;
          try {
            this.events.push(JSON.parse(line) as WatchLine);
          } catch {
            this.badLines.push(line);
          }
        }
      });
      res.on('end', () => this.resolveEnd('end'));
      res.on('aborted', () => this.resolveEnd('aborted'));
      res.on('error', () => this.resolveEnd('aborted'));
      res.on('close', () => this.resolveEnd(res.complete ? 'end' : 'aborted'));
    });
    this.req.on('error', () => {
      opened();
      this.resolveEnd('aborted');
    });
    this.req.end();
  }

  /** Waits until `count` events arrived (of `type`, when given). */
  async until(count: number, type?: string, ms = 5000): Promise<WatchLine[]> {
    return eventually(() => {
      const seen = type === undefined ? this.events : this.events.filter((e) => e.type === type);
      return seen.length >= count ? seen : undefined;
    }, ms, `${count} ${type ?? ''} watch events (have ${JSON.stringify(this.events.map((e) => `${e.type} ${e.object.metadata?.name ?? ''}`))})`);
  }

  close(): void {
    this.req.destroy();
  }
}

export function watchPath(base: string, query: Record<string, string> = {}): string {
  const params = new URLSearchParams({ watch: 'true', ...query });
  return `${base}?${params.toString()}`;
}

/** The Status body of a client-node ApiException (or any error carrying `code` and `body`). */
export function statusOf(error: unknown): { code: number; body: Record<string, unknown> } {
  const e = error as { code?: number; body?: unknown };
  if (typeof e?.code !== 'number') throw error;
  const body = typeof e.body === 'string' ? (JSON.parse(e.body) as Record<string, unknown>) : (e.body as Record<string, unknown>);
  return { code: e.code, body };
}

/** Runs `op`, expecting it to fail with an API error; returns its code and Status body. */
export async function failure(op: Promise<unknown>): Promise<{ code: number; body: Record<string, unknown> }> {
  try {
    await op;
  } catch (error) {
    return statusOf(error);
  }
  throw new Error('expected the request to fail');
}

export const pods = { group: '', version: 'v1', resource: 'pods' } as const;
export const configmaps = { group: '', version: 'v1', resource: 'configmaps' } as const;
export const namespaces = { group: '', version: 'v1', resource: 'namespaces' } as const;
export const deployments = { group: 'apps', version: 'v1', resource: 'deployments' } as const;

export function pod(name: string, extra: { metadata?: V1ObjectMeta; spec?: Partial<V1PodSpec> } = {}): V1Pod {
  return {
    metadata: { name, ...extra.metadata },
    spec: { containers: [{ name: 'app', image: 'nginx:1.27' }], ...extra.spec },
  };
}

/**
 * A CRD in client-node's model naming: its serializer only knows
 * `x_kubernetes_preserve_unknown_fields`, `_default`, `_enum`, `ref`..., and
 * drops the wire names (`x-kubernetes-preserve-unknown-fields`, `default`, `enum`, `$ref`).
 */
export function modelCrd(wire: Record<string, unknown>): V1CustomResourceDefinition {
  const schema = (value: unknown): unknown => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      const renamed: Record<string, string> = { default: '_default', enum: '_enum', $ref: 'ref', $schema: 'schema' };
      const name = renamed[key] ?? (key.startsWith('x-kubernetes-') ? key.replaceAll('-', '_') : key);
      if (key === 'properties' && v !== null && typeof v === 'object') out[name] = Object.fromEntries(Object.entries(v).map(([k, p]) => [k, schema(p)]));
      else if (['items', 'additionalProperties', 'not'].includes(key)) out[name] = schema(v);
      else if (['allOf', 'anyOf', 'oneOf'].includes(key) && Array.isArray(v)) out[name] = v.map(schema);
      else out[name] = v;
    }
    return out;
  };
  const crd = structuredClone(wire) as { spec: { versions: { schema?: { openAPIV3Schema?: unknown } }[] } };
  for (const version of crd.spec.versions) {
    if (version.schema?.openAPIV3Schema !== undefined) version.schema.openAPIV3Schema = schema(version.schema.openAPIV3Schema);
  }
  return crd as unknown as V1CustomResourceDefinition;
}

/** A Widget CRD in the wire format (example.com/v1, namespaced, with a status subresource unless told otherwise). */
export function widgetCrd(options: { scope?: 'Namespaced' | 'Cluster'; status?: boolean; plural?: string; kind?: string } = {}): Record<string, unknown> {
  const plural = options.plural ?? 'widgets';
  const kind = options.kind ?? 'Widget';
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.example.com` },
    spec: {
      group: 'example.com',
      scope: options.scope ?? 'Namespaced',
      names: { plural, singular: kind.toLowerCase(), kind, shortNames: ['wd'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          ...(options.status === false ? {} : { subresources: { status: {} } }),
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}
