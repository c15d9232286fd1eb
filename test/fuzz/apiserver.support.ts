import { request } from 'node:http';
import { connect } from 'node:net';
import fc from 'fast-check';
import { stringify as stringifyYaml } from 'yaml';
import { mutated, oddValue } from './arbitraries.js';

/** Request arbitraries and a raw HTTP client for fuzzing the embedded API server. */

export interface FuzzRequest {
  method: string;
  path: string;
  query: [string, string][];
  headers: Record<string, string>;
  body: Buffer | undefined;
}

export interface FuzzResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** True when the response was a watch stream that the client closed after its first bytes. */
  streamed: boolean;
}

// ---------------------------------------------------------------------------------------------
// Paths

/** A resource the server serves, with what a body for it names. */
export interface Served {
  prefix: string;
  resource: string;
  namespaced: boolean;
  apiVersion: string;
  kind: string;
}

export const served: Served[] = [
  { prefix: '/api/v1', resource: 'configmaps', namespaced: true, apiVersion: 'v1', kind: 'ConfigMap' },
  { prefix: '/api/v1', resource: 'pods', namespaced: true, apiVersion: 'v1', kind: 'Pod' },
  { prefix: '/api/v1', resource: 'secrets', namespaced: true, apiVersion: 'v1', kind: 'Secret' },
  { prefix: '/api/v1', resource: 'services', namespaced: true, apiVersion: 'v1', kind: 'Service' },
  { prefix: '/api/v1', resource: 'events', namespaced: true, apiVersion: 'v1', kind: 'Event' },
  { prefix: '/api/v1', resource: 'namespaces', namespaced: false, apiVersion: 'v1', kind: 'Namespace' },
  { prefix: '/apis/apps/v1', resource: 'deployments', namespaced: true, apiVersion: 'apps/v1', kind: 'Deployment' },
  { prefix: '/apis/coordination.k8s.io/v1', resource: 'leases', namespaced: true, apiVersion: 'coordination.k8s.io/v1', kind: 'Lease' },
  { prefix: '/apis/events.k8s.io/v1', resource: 'events', namespaced: true, apiVersion: 'events.k8s.io/v1', kind: 'Event' },
  { prefix: '/apis/apiextensions.k8s.io/v1', resource: 'customresourcedefinitions', namespaced: false, apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition' },
  { prefix: '/apis/example.com/v1', resource: 'widgets', namespaced: true, apiVersion: 'example.com/v1', kind: 'Widget' },
];

const segment = fc.oneof(
  fc.stringMatching(/^[a-z0-9.-]{1,12}$/),
  fc.constantFrom('', '.', '..', 'UPPER', 'a_b', 'x'.repeat(300), '%2F', '%zz', '%00', '%C3%A9', '%E2%9D%A4', 'a%2Fb', 'watch', 'namespaces', 'status'),
  fc.string({ unit: 'grapheme', maxLength: 6 }).map(encodeURIComponent),
);
export const names = ['a', 'b', 'fuzz', 'fuzz-2', 'default', 'widgets.example.com'];
const name = fc.oneof({ weight: 6, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: segment });
const namespace = fc.oneof({ weight: 12, arbitrary: fc.constant('default') }, { weight: 2, arbitrary: fc.constantFrom('kube-system', 'fuzz-ns') }, { weight: 1, arbitrary: segment });
const subresource = fc.oneof({ weight: 4, arbitrary: fc.constantFrom('status', 'scale', 'finalize') }, { weight: 1, arbitrary: segment });

/** What a request addresses: mostly a served resource in the right scope, sometimes not. */
export interface Target {
  path: string;
  served: Served | undefined;
  /** The object name in the path, if any. */
  name?: string;
}

/** A resource path; `item` says how often it names an object (in 10). */
const resourceTarget = (item: number): fc.Arbitrary<Target> =>
  fc
  .record({
    served: fc.constantFrom(...served),
    otherApi: fc.oneof({ weight: 20, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.tuple(segment, segment).map(([g, v]) => `/apis/${g}/${v}`) }),
    otherResource: fc.oneof({ weight: 20, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: segment }),
    watchPrefix: fc.oneof({ weight: 12, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    scope: fc.oneof({ weight: 10, arbitrary: fc.constant('right') }, { weight: 1, arbitrary: fc.constant('wrong') }),
    namespace,
    name: fc.oneof({ weight: item, arbitrary: name }, { weight: 10 - item, arbitrary: fc.constant(undefined) }),
    subresource: fc.oneof({ weight: 8, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: subresource }),
  })
  .map((t) => {
    const namespaced = t.scope === 'right' ? t.served.namespaced : !t.served.namespaced;
    const parts = [
      t.otherApi ?? t.served.prefix,
      t.watchPrefix ? 'watch' : '',
      namespaced ? `namespaces/${t.namespace}` : '',
      t.otherResource ?? t.served.resource,
      t.name ?? '',
      t.name === undefined ? '' : (t.subresource ?? ''),
    ];
    const known = t.otherApi === undefined && t.otherResource === undefined;
    return { path: parts.filter((p) => p !== '').join('/'), served: known ? t.served : undefined, name: t.name === undefined ? undefined : decodeSegment(t.name) };
  });

/** What a request with `method` addresses: mostly the collection for a POST, an object otherwise. */
export function target(method: string): fc.Arbitrary<Target> {
  // Few deletes of whole collections: they would empty the server of what the other requests need.
  const item = method === 'POST' ? 1 : method === 'GET' ? 6 : 9;
  return fc.oneof(
    { weight: 14, arbitrary: resourceTarget(item) },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom('/', '/api', '/apis', '/apis/apps', '/apis/apps/v1', '/version', '/healthz', '/livez/ping', '/readyz', '/openapi/v2', '/openapi/v3', '/openapi/v3/api/v1', '/openapi/v3/apis/apps/v1', '/metrics', '//', '/api/v2', '/apis/apps/v1/')
        .map((path) => ({ path, served: undefined })),
    },
    { weight: 1, arbitrary: fc.array(segment, { maxLength: 7 }).map((parts) => ({ path: `/${parts.join('/')}`, served: undefined })) },
  );
}

// ---------------------------------------------------------------------------------------------
// Query strings

const validLabelSelector = fc.constantFrom('', 'app=web', 'app in (a,b),!x', 'tier notin (db)', 'a,b!=c', 'count>5', 'k8s.io/app=x');
const validFieldSelector = fc.constantFrom('', 'metadata.name=a', 'metadata.namespace!=default', 'status.phase=Running', 'spec.nodeName=n', 'metadata.name=a,metadata.namespace=default');
const selectorUnit = fc.constantFrom(...'a=!,()<> \\/.-_', 'in', 'notin', 'metadata.name', 'é');
const continueToken = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.record({ v: fc.oneof(fc.constant('meta.k8s.io/v1'), oddValue), rv: fc.oneof(fc.integer({ min: -2, max: 1e9 }), oddValue), start: fc.oneof(fc.constantFrom('default/a', ''), oddValue) }, { requiredKeys: [] }).map((key) =>
    Buffer.from(JSON.stringify(key)).toString('base64url'),
  ),
);
const numberish = fc.oneof(fc.constantFrom('0', '1', '-1', '10', '500', '999999999999999999999', '1e3', '0x10', '', ' 5', 'abc', '3.5', 'NaN', 'Infinity'), fc.nat().map(String));
const boolish = fc.constantFrom('true', 'false', '1', '0', 't', 'True', '', 'yes', 'maybe');

const queryParam: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.tuple(fc.constant('labelSelector'), fc.oneof(validLabelSelector, mutated(validLabelSelector, selectorUnit), fc.string({ maxLength: 20 }))),
  fc.tuple(fc.constant('fieldSelector'), fc.oneof(validFieldSelector, mutated(validFieldSelector, selectorUnit), fc.string({ maxLength: 20 }))),
  fc.tuple(fc.constant('limit'), numberish),
  fc.tuple(fc.constant('continue'), continueToken),
  fc.tuple(fc.constant('resourceVersion'), numberish),
  fc.tuple(fc.constant('resourceVersionMatch'), fc.constantFrom('NotOlderThan', 'Exact', 'exact', '', 'Any')),
  fc.tuple(fc.constant('watch'), boolish),
  fc.tuple(fc.constant('allowWatchBookmarks'), boolish),
  fc.tuple(fc.constant('sendInitialEvents'), boolish),
  fc.tuple(fc.constant('timeoutSeconds'), numberish),
  fc.tuple(fc.constant('fieldManager'), fc.oneof(fc.constantFrom('fuzzer', '', 'kubectl', 'x'.repeat(200), 'é'), fc.string({ maxLength: 10 }))),
  fc.tuple(fc.constant('fieldValidation'), fc.constantFrom('Strict', 'Warn', 'Ignore', 'strict', '')),
  fc.tuple(fc.constant('dryRun'), fc.constantFrom('All', 'all', '', 'None')),
  fc.tuple(fc.constant('force'), boolish),
  fc.tuple(fc.constant('propagationPolicy'), fc.constantFrom('Foreground', 'Background', 'Orphan', 'orphan', '', 'None')),
  fc.tuple(fc.constant('orphanDependents'), boolish),
  fc.tuple(fc.constant('gracePeriodSeconds'), numberish),
  fc.tuple(fc.constant('includeObject'), fc.constantFrom('Object', 'Metadata', 'None', 'x')),
  fc.tuple(fc.constant('pretty'), boolish),
  fc.tuple(fc.stringMatching(/^[a-zA-Z]{1,8}$/), fc.string({ maxLength: 10 })),
);

// ---------------------------------------------------------------------------------------------
// Bodies and content types

const oddMetadata = fc.record(
  {
    name: fc.oneof({ weight: 2, arbitrary: fc.constantFrom('A_B', '..', 'x'.repeat(300), 'a/b', 'é', ' a', '-a', '') }, { weight: 1, arbitrary: oddValue }),
    generateName: fc.oneof(fc.constantFrom('gen-', 'GEN', ''), oddValue),
    namespace: fc.oneof(fc.constantFrom('default', 'other'), oddValue),
    labels: fc.oneof(fc.dictionary(fc.string({ maxLength: 5 }), oddValue, { maxKeys: 3 }), oddValue),
    annotations: oddValue,
    finalizers: fc.oneof(fc.array(oddValue, { maxLength: 2 }), oddValue),
    ownerReferences: fc.oneof(fc.array(oddValue, { maxLength: 2 }), oddValue),
    resourceVersion: fc.oneof(fc.constantFrom('1', '999999', ''), oddValue),
    uid: oddValue,
    managedFields: fc.oneof(fc.array(fc.record({ manager: oddValue, operation: oddValue, fieldsV1: fc.jsonValue({ maxDepth: 2 }) }, { requiredKeys: [] }), { maxLength: 2 }), oddValue),
    deletionTimestamp: oddValue,
    creationTimestamp: oddValue,
    generation: oddValue,
  },
  { requiredKeys: [] },
);

/** Mostly sound metadata; sometimes with a field or several of the wrong shape. */
const metadataValue = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      {
        name: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: fc.stringMatching(/^[a-z][a-z0-9-]{0,8}[a-z0-9]$/) }),
        generateName: fc.constant('gen-'),
        labels: fc.constantFrom({ app: 'web' }, { app: 'db', tier: 'x' }),
        annotations: fc.constant({ note: 'x' }),
        finalizers: fc.constant(['example.com/f']),
        ownerReferences: fc.constant([{ apiVersion: 'v1', kind: 'ConfigMap', name: 'a', uid: 'no-such-uid' }]),
      },
      { requiredKeys: ['name'] },
    ),
  },
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...names), oddMetadata).map(([n, odd]) => ({ name: n, ...odd })) },
  { weight: 1, arbitrary: oddMetadata },
);

const kinds = ['ConfigMap', 'Pod', 'Secret', 'Namespace', 'Deployment', 'Widget', 'Scale', 'Status'];
const apiVersions = ['v1', 'apps/v1', 'example.com/v1', 'autoscaling/v1', 'v2'];

/** A metav1.LabelSelector with parts of the wrong type or wrong values. */
const oddSelector = fc.record(
  {
    matchLabels: fc.oneof(fc.dictionary(fc.constantFrom('app', 'a b', ''), oddValue, { maxKeys: 2 }), oddValue),
    matchExpressions: fc.oneof(
      fc.array(fc.record({ key: fc.oneof(fc.constant('app'), oddValue), operator: fc.oneof(fc.constantFrom('In', 'Exists', 'Gt'), oddValue), values: oddValue }, { requiredKeys: [] }), { maxLength: 2 }),
      oddValue,
    ),
  },
  { requiredKeys: [] },
);

const objects = new Map<Served | undefined, fc.Arbitrary<Record<string, unknown>>>();

/** An object body, most often of the kind the target serves (built once per resource). */
function objectBody(t: Target): fc.Arbitrary<Record<string, unknown>> {
  let arbitrary = objects.get(t.served);
  if (arbitrary === undefined) objects.set(t.served, (arbitrary = buildObjectBody(t.served)));
  return arbitrary;
}

function buildObjectBody(right: Served | undefined): fc.Arbitrary<Record<string, unknown>> {
  return fc.record(
    {
      apiVersion: fc.oneof({ weight: 6, arbitrary: fc.constant(right?.apiVersion ?? 'v1') }, { weight: 1, arbitrary: fc.constantFrom(...apiVersions) }, { weight: 1, arbitrary: oddValue }),
      kind: fc.oneof({ weight: 6, arbitrary: fc.constant(right?.kind ?? 'ConfigMap') }, { weight: 1, arbitrary: fc.constantFrom(...kinds) }, { weight: 1, arbitrary: oddValue }),
      metadata: fc.oneof({ weight: 12, arbitrary: metadataValue }, { weight: 1, arbitrary: oddValue }),
      data: fc.oneof({ weight: 4, arbitrary: fc.dictionary(fc.stringMatching(/^[a-z.]{1,4}$/), fc.string({ maxLength: 8 }), { maxKeys: 3 }) }, { weight: 1, arbitrary: oddValue }),
      spec: fc.oneof(
        { weight: 1, arbitrary: fc.constant(undefined) },
        fc.record(
          {
            replicas: fc.oneof(fc.integer({ min: -1, max: 5 }), oddValue),
            containers: fc.oneof(fc.constant([{ name: 'app', image: 'nginx' }]), oddValue),
            selector: fc.oneof(fc.constant({ matchLabels: { app: 'a' } }), oddSelector, oddValue),
            template: fc.oneof(fc.constant({ metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } }), oddValue),
            size: oddValue,
          },
          { requiredKeys: [] },
        ),
        fc.jsonValue({ maxDepth: 3 }),
      ),
      status: fc.oneof(fc.record({ phase: fc.constantFrom('Running', 'Pending'), replicas: fc.integer({ min: 0, max: 3 }) }, { requiredKeys: [] }), oddValue),
    },
    { requiredKeys: [] },
  );
}

const jsonPatch = fc.array(
  fc.record(
    {
      op: fc.oneof(fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test'), oddValue),
      path: fc.oneof(fc.constantFrom('', '/', '/metadata/labels/x', '/data/k', '/spec/replicas', '/metadata/name', '/metadata/-', '/a~1b', '/__proto__/x', '/data/~2'), oddValue),
      from: fc.oneof(fc.constantFrom('/data', '/metadata/labels'), oddValue),
      value: fc.jsonValue({ maxDepth: 2 }),
    },
    { requiredKeys: ['op'] },
  ),
  { maxLength: 4 },
);

/** Text nested `depth` levels deep, as arrays or objects. */
const deepJson = fc.tuple(fc.oneof(fc.integer({ min: 990, max: 1010 }), fc.integer({ min: 100, max: 20_000 })), fc.boolean()).map(([depth, arrays]) =>
  arrays ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
);

/** Bodies for a target, built once per served resource: building these arbitraries is far dearer than drawing from them. */
const bodies = new Map<Served | undefined, fc.Arbitrary<string | Buffer>>();
function bodyText(t: Target): fc.Arbitrary<string | Buffer> {
  let arbitrary = bodies.get(t.served);
  if (arbitrary === undefined) bodies.set(t.served, (arbitrary = buildBodyText(t)));
  return arbitrary;
}

const buildBodyText = (t: Target): fc.Arbitrary<string | Buffer> => fc.oneof(
  { weight: 8, arbitrary: objectBody(t).map((b) => JSON.stringify(b)) },
  { weight: 1, arbitrary: objectBody(t).map((b) => stringifyYaml(b)) },
  { weight: 2, arbitrary: jsonPatch.map((p) => JSON.stringify(p)) },
  { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: mutated(objectBody(t).map((b) => JSON.stringify(b)), fc.constantFrom('{', '}', '[', ']', '"', ',', ':', '\\', 'null', '\u0000')) },
  { weight: 1, arbitrary: deepJson },
  { weight: 1, arbitrary: fc.constantFrom('a: [1, 2\n', 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: yaml\n', '- &a [*a]\n', 'x: !!binary AAAA\n', '{"a": 1, "a": 2}', '%YAML 1.2\n---\n', '---\n---\n', 'a: &x 1\nb: *x\n') },
  { weight: 1, arbitrary: fc.integer({ min: 10_000, max: 1_500_000 }).map((n) => JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'huge' }, data: { big: 'x'.repeat(n) } })) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)) },
  { weight: 1, arbitrary: fc.constant('') },
);

const contentType = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('application/json', 'application/merge-patch+json', 'application/json-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml') },
  fc.constantFrom(
    'application/json',
    'application/yaml',
    'application/merge-patch+json',
    'application/json-patch+json',
    'application/strategic-merge-patch+json',
    'application/apply-patch+yaml',
    'application/vnd.kubernetes.protobuf',
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'text/plain',
    '*/*',
    ';',
    '',
  ),
  fc.string({ maxLength: 12 }).map((s) => s.replace(/[^\x20-\x7e]/g, '')),
);

const accept = fc.constantFrom(
  'application/json',
  'application/json;as=Table;v=v1;g=meta.k8s.io',
  'application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json',
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
  'application/vnd.kubernetes.protobuf',
  'application/yaml',
  '*/*',
  'text/html',
  ';;;',
);

export const method = fc.oneof({ weight: 10, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE') }, { weight: 1, arbitrary: fc.constantFrom('HEAD', 'OPTIONS', 'TRACE', 'FOO') });

/** Present with probability `weight` in 10. */
function sometimes<T>(arbitrary: fc.Arbitrary<T>, weight: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ weight, arbitrary }, { weight: 10 - weight, arbitrary: fc.constant(undefined) });
}

const patchTypes = ['application/merge-patch+json', 'application/json-patch+json', 'application/strategic-merge-patch+json', 'application/apply-patch+yaml'];

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** The body with the path's name, as a PUT or an apply must carry it (when it has metadata to carry it). */
function named(body: Record<string, unknown>, t: Target): Record<string, unknown> {
  const meta = body.metadata;
  if (t.name === undefined || meta === null || typeof meta !== 'object' || Array.isArray(meta)) return body;
  return { ...body, metadata: { ...meta, name: t.name } };
}

/** A content type and body that fit the method most of the time, and anything otherwise. */
interface Payload {
  contentType: string | undefined;
  body: string | Buffer | undefined;
  /** Query parameters the payload needs (an apply's fieldManager). */
  query?: [string, string][];
}

function payload(method: string, t: Target): fc.Arbitrary<Payload> {
  const anything = fc.record({ contentType: sometimes(contentType, 8), body: sometimes(bodyText(t), 9) });
  const object = objectBody(t);
  let fitting: fc.Arbitrary<Payload>;
  if (method === 'POST' || method === 'PUT') {
    fitting = fc.oneof(
      { weight: 4, arbitrary: object.map((b) => ({ contentType: 'application/json', body: JSON.stringify(method === 'PUT' ? named(b, t) : b) })) },
      { weight: 1, arbitrary: object.map((b) => ({ contentType: 'application/yaml', body: stringifyYaml(method === 'PUT' ? named(b, t) : b) })) },
    );
  } else if (method === 'PATCH') {
    fitting = fc.constantFrom(...patchTypes).chain((type) => {
      if (type === 'application/json-patch+json') return jsonPatch.map((p) => ({ contentType: type, body: JSON.stringify(p) }));
      if (type === 'application/apply-patch+yaml') {
        return object.map((b): Payload => ({ contentType: type, body: stringifyYaml(named(b, t)), query: [['fieldManager', 'fuzzer']] }));
      }
      return object.map((b) => ({ contentType: type, body: JSON.stringify(b) }));
    });
  } else {
    fitting = fc.constant({ contentType: undefined, body: undefined });
  }
  return fc.oneof({ weight: 3, arbitrary: fitting }, { weight: 2, arbitrary: anything });
}

export const fuzzRequest: fc.Arbitrary<FuzzRequest> = method
  .chain((m) => target(m).map((t) => ({ m, t })))
  .chain(({ m, t }) =>
    fc.record({
      method: fc.constant(m),
      path: fc.constant(t.path),
      query: fc.oneof(fc.constant<[string, string][]>([]), fc.array(queryParam, { maxLength: 4 })),
      payload: payload(m, t),
      accept: sometimes(accept, 2),
      userAgent: sometimes(fc.constantFrom('kubectl/v1.32', '/x', '', 'é'.repeat(3)), 3),
    }),
  )
  .map((r) => {
    const headers: Record<string, string> = {};
    if (r.payload.contentType !== undefined) headers['Content-Type'] = r.payload.contentType;
    if (r.accept !== undefined) headers.Accept = r.accept;
    if (r.userAgent !== undefined) headers['User-Agent'] = encodeURIComponent(r.userAgent);
    // Node's HTTP parser refuses request heads over 16 kB before any handler runs: keep queries below that.
    const query = [...(r.payload.query ?? []), ...r.query].map(([k, v]): [string, string] => [k, v.slice(0, 2000)]);
    const body = r.payload.body;
    return { method: r.method, path: r.path, query, headers, body: body === undefined ? undefined : Buffer.from(body) };
  });

// ---------------------------------------------------------------------------------------------
// The client

export function urlPath(r: FuzzRequest): string {
  const query = new URLSearchParams(r.query).toString();
  return query === '' ? r.path : `${r.path}?${query}`;
}

function isWatch(r: FuzzRequest): boolean {
  const watch = r.query.filter(([k]) => k === 'watch').map(([, v]) => v)[0];
  return r.path.includes('/watch/') || (watch !== undefined && ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(watch));
}

/**
 * Sends one request. A watch that opens (200) is read for a moment and closed; anything else
 * must be answered in full within `deadlineMs`, or the promise rejects with a "hang".
 */
export function send(baseUrl: string, r: FuzzRequest, deadlineMs = 10_000): Promise<FuzzResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...r.headers };
    if (r.body !== undefined) headers['Content-Length'] = r.body.length;
    const req = request(`${baseUrl}${urlPath(r)}`, { method: r.method, headers }, (res) => {
      const chunks: Buffer[] = [];
      const streaming = res.statusCode === 200 && isWatch(r) && r.method === 'GET';
      if (streaming) {
        // A watch stays open: take what comes in a moment, then hang up.
        setTimeout(() => {
          clearTimeout(timer);
          res.destroy();
          resolve({ status: 200, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), streamed: true });
        }, 20);
      }
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        clearTimeout(timer);
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8'), streamed: false });
      });
      res.on('error', () => {});
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new Error(`hang: ${r.method} ${urlPath(r).slice(0, 200)} got no complete answer in ${deadlineMs} ms`));
    }, deadlineMs);
    req.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`${r.method} ${urlPath(r).slice(0, 200)}: ${error.message}`));
    });
    req.end(r.body);
  });
}

/** Sends a raw request line (and headers) over TCP and returns the status code of the answer (0 when the socket closed silently). */
export function sendRaw(host: string, port: number, head: string, deadlineMs = 5000): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`hang: raw request ${JSON.stringify(head.slice(0, 200))}`));
    }, deadlineMs);
    socket.on('data', (c: Buffer) => {
      text += c.toString('latin1');
      const match = /^HTTP\/1\.[01] (\d{3})/.exec(text);
      if (match !== null && text.includes('\r\n\r\n')) {
        clearTimeout(timer);
        socket.destroy();
        resolve(Number(match[1]));
      }
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(0);
    });
    socket.on('error', () => {});
    socket.write(head);
  });
}
