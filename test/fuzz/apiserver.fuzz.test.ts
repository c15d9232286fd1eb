import { expect } from 'chai';
import fc from 'fast-check';
import type { Logger } from 'rxkube';
import { parseLabelSelector } from '../../src/apiserver/selectors/labelSelector.js';
import { startApiServer, type ApiServer } from 'rxkube/testing';
import { widgetCrd } from '../integration/apiserver.helpers.js';
import { fuzzRequest, names, send, sendRaw, served, type FuzzRequest, type FuzzResponse } from './apiserver.support.js';

/**
 * The embedded API server fed random methods, paths, query strings, content types and bodies
 * (random JSON, random bytes, deeply nested JSON, huge strings, wrong kinds, invalid names,
 * metadata of wrong types). Every request must end in a Kubernetes Status error (4xx, kind
 * Status, a reason and a message) or a correct result: never a 5xx, never a crash, never a hang.
 * What a write says it did must be what a read then finds, and the server must stay healthy.
 */

/** A logger that keeps what the server logs as errors: a 500 is logged there with its cause. */
function recordingLogger(errors: unknown[]): Logger {
  const ignore = () => {};
  return { debug: ignore, info: ignore, warn: ignore, error: (fields, message) => errors.push({ fields, message }) };
}

function describeRequest(r: FuzzRequest): string {
  const body = r.body === undefined ? '' : ` body(${r.body.length}): ${r.body.toString('utf8').slice(0, 200)}`;
  return `${r.method} ${r.path} ${JSON.stringify(r.query)} ${JSON.stringify(r.headers)}${body}`;
}

/** The properties every single answer must have. */
function expectProperAnswer(r: FuzzRequest, res: FuzzResponse): void {
  const what = `${describeRequest(r)} -> ${res.status} ${res.text.slice(0, 300)}`;
  // The one 5xx the API itself defines for a client's request: a resourceVersion (or continue
  // token) newer than anything the server has is a 504 Timeout with a ResourceVersionTooLarge
  // cause, which tells the client to retry later (client-go's reflector knows it by that cause).
  const tooLarge = res.status === 504 && (res.text.includes('"ResourceVersionTooLarge"') || (r.method === 'HEAD' && r.query.some(([k]) => k === 'resourceVersion' || k === 'continue')));
  expect(res.status < 500 || tooLarge, `no 5xx: ${what}`).to.equal(true);
  expect(res.status, `a real status: ${what}`).to.be.at.least(200);
  if (r.method === 'HEAD' || res.streamed) return;
  if (res.status >= 400) {
    let status: Record<string, unknown>;
    try {
      status = JSON.parse(res.text) as Record<string, unknown>;
    } catch {
      expect.fail(`a Status body: ${what}`);
    }
    expect(status.kind, `kind Status: ${what}`).to.equal('Status');
    expect(status.status, what).to.equal('Failure');
    expect(status.code, what).to.equal(res.status);
    expect(status.reason, `a reason: ${what}`).to.be.a('string').and.not.equal('');
    expect(status.message, `a message: ${what}`).to.be.a('string').and.not.equal('');
  } else if (String(res.headers['content-type']).startsWith('application/json')) {
    expect(() => JSON.parse(res.text), `JSON body: ${what}`).not.to.throw();
  }
}

/** A list answer holds no more items than `limit` asked, and only items its label selector matches. */
function expectListHonoursQuery(r: FuzzRequest, res: FuzzResponse): void {
  const body = JSON.parse(res.text) as { kind?: string; items?: { metadata?: { labels?: Record<string, string> } }[] };
  // Discovery documents (APIGroupList, APIGroupDiscoveryList, ...) are lists of no objects.
  if (typeof body.kind !== 'string' || !body.kind.endsWith('List') || body.kind.startsWith('API') || !Array.isArray(body.items)) return;
  const last = (key: string) => r.query.filter(([k]) => k === key).map(([, v]) => v)[0];
  const limit = Number(last('limit'));
  if (Number.isInteger(limit) && limit > 0) expect(body.items.length, `${describeRequest(r)}: at most limit items`).to.be.at.most(limit);
  const selector = last('labelSelector');
  if (selector !== undefined && selector !== '') {
    const parsed = parseLabelSelector(selector);
    for (const item of body.items) {
      expect(parsed.matches(item.metadata?.labels), `${describeRequest(r)}: ${JSON.stringify(item.metadata?.labels)} matches`).to.equal(true);
    }
  }
}

/** The object path a successful write answered for, to read it back. */
function itemPath(r: FuzzRequest, object: { metadata?: { name?: unknown } }): string | undefined {
  const name = object.metadata?.name;
  if (typeof name !== 'string') return undefined;
  if (r.method === 'POST') return `${r.path}/${encodeURIComponent(name)}`;
  // `/status` and `/scale` after the name are subresources; an object may also be named "status".
  const sub = /\/(status|scale)$/.exec(r.path);
  const parent = sub === null ? undefined : r.path.slice(0, -sub[0].length);
  return parent !== undefined && parent.endsWith(`/${encodeURIComponent(name)}`) ? parent : r.path;
}

describe('fuzz: the embedded API server', function () {
  // A guard against a hang, not a timing assertion (a busy machine makes 5 000 requests slow).
  this.timeout(600_000);
  let server: ApiServer;
  const logged: unknown[] = [];
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);

  before(async () => {
    process.on('warning', onWarning);
    server = await startApiServer({ logger: recordingLogger(logged), bookmarkIntervalMs: 10 });
    expect((await seed('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd())).status).to.equal(201);
    await seed('/api/v1/namespaces', { metadata: { name: 'fuzz-ns' } });
    await seedObjects();
  });

  after(async () => {
    process.off('warning', onWarning);
    await server.close();
    expect(warnings.map((w) => `${w.name}: ${w.message}`), 'no process warning (a timer overflow, say)').to.deep.equal([]);
  });

  const seed = (path: string, body: unknown) => send(server.url, { method: 'POST', path, query: [], headers: { 'Content-Type': 'application/json' }, body: Buffer.from(JSON.stringify(body)) });

  /** Objects under the names the fuzzer uses, so reads, updates, patches and deletes find something (again after deletes). */
  async function seedObjects(): Promise<void> {
    await seed('/apis/apiextensions.k8s.io/v1/customresourcedefinitions', widgetCrd());
    const specs: Record<string, Record<string, unknown>> = {
      pods: { spec: { containers: [{ name: 'app', image: 'nginx' }] } },
      deployments: {
        spec: { replicas: 1, selector: { matchLabels: { app: 'a' } }, template: { metadata: { labels: { app: 'a' } }, spec: { containers: [{ name: 'app', image: 'nginx' }] } } },
      },
      configmaps: { data: { k: 'v' } },
      events: { involvedObject: { kind: 'Pod', name: 'a', namespace: 'default' }, reason: 'Fuzz', message: 'fuzz' },
      widgets: { spec: { size: 1 } },
    };
    for (const s of served) {
      if (s.resource === 'customresourcedefinitions') continue;
      for (const n of names.filter((n) => n !== 'widgets.example.com')) {
        const collection = `${s.prefix}${s.namespaced ? '/namespaces/default' : ''}/${s.resource}`;
        const answer = await seed(collection, { apiVersion: s.apiVersion, kind: s.kind, metadata: { name: n, labels: { app: 'web' } }, ...specs[s.resource] });
        // Best effort: the fuzzer may have deleted the CRD or left a namespace terminating.
        expect(answer.status, `seeding ${collection}/${n}: ${answer.text.slice(0, 300)}`).to.be.below(500);
      }
  }
  }

  /** The server still answers an ordinary request as it should. */
  async function expectHealthy(): Promise<void> {
    const list = await send(server.url, { method: 'GET', path: '/api/v1/namespaces/default/configmaps', query: [], headers: {}, body: undefined });
    expect(list.status, list.text.slice(0, 300)).to.equal(200);
    expect((JSON.parse(list.text) as { kind: string }).kind).to.equal('ConfigMapList');
    expect((await send(server.url, { method: 'GET', path: '/healthz', query: [], headers: {}, body: undefined })).status).to.equal(200);
  }

  it('answers every random request with a proper Status error or a correct result, and a read finds what a write said', async () => {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(fuzzRequest, async (r) => {
        if (++runs % 100 === 0) await seedObjects();
        logged.length = 0;
        warnings.length = 0;
        const res = await send(server.url, r);
        expectProperAnswer(r, res);
        expect(logged, `nothing logged as an error for ${describeRequest(r)}`).to.deep.equal([]);
        await new Promise((resolve) => setImmediate(resolve));
        expect(warnings.map((w) => `${w.name}: ${w.message}`), `no process warning for ${describeRequest(r)}`).to.deep.equal([]);
        const dryRun = r.query.some(([k, v]) => k === 'dryRun' && v === 'All');
        const isWrite = ['POST', 'PUT', 'PATCH'].includes(r.method);
        if (isWrite && (res.status === 200 || res.status === 201) && !dryRun && !res.streamed) {
          const written = JSON.parse(res.text) as { kind?: string; metadata?: { name?: unknown; resourceVersion?: string; ownerReferences?: unknown[]; deletionTimestamp?: string } };
          const path = itemPath(r, written);
          if (path !== undefined && written.kind !== 'Status' && written.kind !== 'Scale' && !r.path.endsWith('/finalize')) {
            const read = await send(server.url, { method: 'GET', path, query: [], headers: {}, body: undefined });
            expectProperAnswer(r, read);
            // The garbage collector may remove an object whose owner is missing as soon as it is written.
            const collectable = (written.metadata?.ownerReferences?.length ?? 0) > 0 || written.metadata?.deletionTimestamp !== undefined;
            if (read.status === 404 && collectable) return;
            expect(read.status, `${describeRequest(r)} wrote ${path}, then GET -> ${read.text.slice(0, 300)}`).to.equal(200);
            const got = JSON.parse(read.text) as { metadata: { resourceVersion?: string } };
            if (got.metadata.resourceVersion === written.metadata?.resourceVersion) {
              expect(got, `GET ${path} returns what ${r.method} answered`).to.deep.equal(written);
            }
          }
        }
        const json = String(res.headers['content-type']).startsWith('application/json');
        if (r.method === 'GET' && res.status === 200 && !res.streamed && json) expectListHonoursQuery(r, res);
        const deletedItem = r.method === 'DELETE' && res.status === 200 && !dryRun && !(JSON.parse(res.text) as { kind?: string }).kind?.endsWith('List');
        if (deletedItem) {
          const read = await send(server.url, { method: 'GET', path: r.path, query: [], headers: {}, body: undefined });
          expectProperAnswer(r, read);
          if (read.status === 200) {
            const got = JSON.parse(read.text) as { metadata: { deletionTimestamp?: string } };
            expect(got.metadata.deletionTimestamp, `a deleted object that remains is being deleted: ${r.path}`).to.be.a('string');
          }
        }
      }),
      { numRuns: 5000 },
    );
    await expectHealthy();
  });

  it('answers random request lines over a raw socket with an HTTP status (a status line, never a dropped connection) below 500 and stays healthy', async () => {
    const { hostname, port } = new URL(server.url);
    const target = fc.oneof(
      fc.string({ unit: fc.constantFrom(...'/abz09.-_%?&=#[]:@!$()*+,;~'.split('')), maxLength: 40 }).map((s) => `/${s}`),
      fc.constantFrom('http://[', 'http://[::1', 'http://x/api/v1', '*', 'http://', 'HTTP://a:b@/', '//x', 'http://%zz/'),
      fc.string({ unit: fc.constantFrom(...'/abz09.-_%?&=#[]:@'.split('')), maxLength: 20 }).map((s) => `http://${s}`),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('GET', 'POST', 'DELETE'), target, async (verb, t) => {
        logged.length = 0;
        const code = await sendRaw(hostname, Number(port), `${verb} ${t} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`);
        // A real status line: a connection closed without one (sendRaw's 0) is no answer at all.
        expect(code, `${verb} ${t}: a status line below 500`).to.be.within(200, 499);
        expect(logged, `nothing logged as an error for ${verb} ${t}`).to.deep.equal([]);
      }),
      { numRuns: 300 },
    );
    await expectHealthy();
  });
});
