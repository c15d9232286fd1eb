import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import fc from 'fast-check';
import { silentLogger, listWatch, ListWatchError, dropManagedFields, type KubeObject, type ListWatchEvent } from 'rxkube';
import { type ListWatchMonitor } from '../../src/sources/listWatch.js';
import { dilatedScheduler } from '../support/dilatedScheduler.js';
import { waitFor } from '../support/waitFor.js';
import { oddValue } from './arbitraries.js';

/**
 * listWatch against a fixture HTTP server that answers each request with the next scripted
 * answer: random status codes, random headers, valid and broken list bodies and watch streams,
 * truncated lines, connections cut mid-body or left silent. The source must never crash or leave
 * an unhandled rejection, must end only with a ListWatchError for a status that no retry can fix
 * (400, 404, 405, 406, 415, 422; 401 and 403 are retried), and must answer every other answer with a new request.
 */

type Ending = 'end' | 'destroy' | 'stall';

interface Answer {
  status: number;
  headers: Record<string, string>;
  chunks: Buffer[];
  ending: Ending;
}

const meta = fc.record(
  { name: fc.oneof(fc.constantFrom('a', 'b', 'c'), oddValue), namespace: fc.oneof(fc.constant('default'), oddValue), resourceVersion: fc.oneof(fc.constantFrom('1', '2', '3'), oddValue), managedFields: fc.constant([{}]) },
  { requiredKeys: [] },
);
const item: fc.Arbitrary<unknown> = fc.oneof({ weight: 5, arbitrary: fc.record({ metadata: meta }, { requiredKeys: [] }) }, { weight: 1, arbitrary: oddValue });

const listBody = fc
  .record(
    {
      kind: fc.oneof(fc.constant('ConfigMapList'), oddValue),
      apiVersion: fc.oneof(fc.constant('v1'), oddValue),
      metadata: fc.oneof(fc.record({ resourceVersion: fc.oneof(fc.constant('7'), oddValue), continue: fc.oneof(fc.constant('next'), oddValue) }, { requiredKeys: [] }), oddValue),
      items: fc.oneof({ weight: 4, arbitrary: fc.array(item, { maxLength: 4 }) }, { weight: 1, arbitrary: oddValue }),
    },
    { requiredKeys: [] },
  )
  .map((list) => JSON.stringify(list));

const watchEvent = fc.oneof(
  fc.record({ type: fc.constantFrom('ADDED', 'MODIFIED', 'DELETED'), object: item }),
  fc.record({
    type: fc.constant('BOOKMARK'),
    object: fc.record({ metadata: fc.record({ resourceVersion: fc.oneof(fc.constant('9'), oddValue), annotations: fc.oneof(fc.constant({ 'k8s.io/initial-events-end': 'true' }), oddValue) }, { requiredKeys: [] }) }),
  }),
  fc.record({ type: fc.constant('ERROR'), object: fc.record({ code: fc.oneof(fc.constantFrom(410, 500, 400, 403, 429), oddValue), reason: oddValue, message: oddValue }, { requiredKeys: [] }) }),
  fc.record({ type: oddValue, object: oddValue }, { requiredKeys: [] }),
);

const watchLine = fc.oneof(
  { weight: 5, arbitrary: watchEvent.map((e) => `${JSON.stringify(e)}\n`) },
  { weight: 1, arbitrary: fc.tuple(watchEvent, fc.nat()).map(([e, n]) => JSON.stringify(e).slice(0, n)) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
);

const body = fc.oneof(
  { weight: 3, arbitrary: listBody.map((text) => Buffer.from(text)) },
  { weight: 1, arbitrary: fc.tuple(listBody, fc.nat()).map(([text, n]) => Buffer.from(text.slice(0, n % (text.length + 1)))) },
  { weight: 3, arbitrary: fc.array(watchLine, { maxLength: 6 }).map((lines) => Buffer.from(lines.join(''))) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('Status'), code: oddValue, reason: oddValue, message: oddValue }, { requiredKeys: [] }).map((s) => Buffer.from(JSON.stringify(s))) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)) },
);

const header = fc.oneof(
  fc.record({ name: fc.constant('Content-Type'), value: fc.constantFrom('application/json', 'text/html', 'application/octet-stream', ';;;', 'application/json; charset=latin1') }),
  fc.record({ name: fc.constant('Retry-After'), value: fc.constantFrom('0', '1', '3', '', 'soon', '-5', '1.5', 'Wed, 21 Oct 2015 07:28:00 GMT', '9999999999') }),
  fc.record({ name: fc.constant('Content-Encoding'), value: fc.constantFrom('gzip', 'br', 'identity') }),
  fc.record({ name: fc.constant('Connection'), value: fc.constantFrom('close', 'keep-alive') }),
  fc.record({ name: fc.stringMatching(/^X-[A-Za-z-]{1,10}$/), value: fc.string({ unit: fc.constantFrom('a', 'z', ' ', '0', ';', '='), maxLength: 20 }) }),
);

const status = fc.oneof(
  { weight: 6, arbitrary: fc.constant(200) },
  { weight: 3, arbitrary: fc.constantFrom(410, 429, 500, 502, 503, 504) },
  { weight: 1, arbitrary: fc.constantFrom(400, 401, 403, 404, 405, 406, 415, 422) },
  { weight: 2, arbitrary: fc.integer({ min: 200, max: 599 }) },
);

const answer: fc.Arbitrary<Answer> = fc.record({
  status,
  headers: fc.array(header, { maxLength: 3 }).map((hs) => Object.fromEntries(hs.map((h) => [h.name, h.value]))),
  chunks: fc.tuple(body, fc.array(fc.nat(), { maxLength: 4 })).map(([bytes, cuts]) => {
    const points = [0, ...cuts.map((c) => c % (bytes.length + 1)).sort((a, b) => a - b), bytes.length];
    return points.slice(1).map((end, i) => bytes.subarray(points[i], end));
  }),
  ending: fc.constantFrom<Ending>('end', 'end', 'end', 'destroy', 'stall'),
});

/** Plays one answer, chunk by chunk on separate ticks, then ends, cuts or holds the connection. */
async function play(answer: Answer, res: ServerResponse): Promise<void> {
  try {
    res.writeHead(answer.status, answer.headers);
    for (const chunk of answer.chunks) {
      if (res.destroyed) return;
      res.write(chunk);
      await new Promise((resolve) => setImmediate(resolve));
    }
    if (answer.ending === 'end') res.end();
    else if (answer.ending === 'destroy') res.destroy();
    // 'stall': the headers (and maybe some body) went out; nothing more until the client gives up.
  } catch {
    res.destroy();
  }
}

/**
 * The test's own definition of a status no retry can fix, from the
 * Kubernetes API conventions (HTTP status codes) and not from the code
 * under test: the request is malformed (400 BadRequest, 422 Invalid), names what is not there (404
 * NotFound: no such resource or namespace), or asks for what the server
 * does not do (405 MethodNotAllowed, 406 NotAcceptable, 415
 * UnsupportedMediaType). Everything else the conventions name is worth
 * another try: 409 Conflict and 429 TooManyRequests (after Retry-After),
 * 410 Gone (a re-list), 500/503/504 (the server's trouble), 401
 * Unauthorized and 403 Forbidden (a token is rotated, RBAC is granted after
 * the controller starts: client-go's reflector and kube-rs's watcher retry
 * them with backoff); and a status
 * they do not name (418, 451, 599) tells a watcher nothing it could act on
 * but to try again.
 */
const NO_RETRY_FIXES = new Set([400, 404, 405, 406, 415, 422]);

/** Could this answer, to this request, end the source with `code`? */
function canBeFatal(answer: Answer | undefined, query: URLSearchParams, code: number): boolean {
  if (answer === undefined) return false;
  // A server that rejects a streaming list (400/422) is listed page by page instead.
  if (query.get('sendInitialEvents') === 'true' && (code === 400 || code === 422)) return false;
  if (answer.status === code) return true;
  if (answer.status !== 200) return false;
  const text = Buffer.concat(answer.chunks).toString('utf8');
  return text.includes('"ERROR"') && text.includes(String(code));
}

describe('fuzz: listWatch against a server that answers anything', function () {
  // A guard against a hang, not a timing assertion (a busy machine makes 200 runs slow).
  this.timeout(600_000);
  let server: Server;
  let kubeConfig: KubeConfig;
  let script: Answer[] = [];
  let served: { query: URLSearchParams; answer: Answer | undefined }[] = [];
  /** Requests the HTTP parser refused before any handler saw them (a URL carrying a 100 kB resourceVersion). */
  let refused = 0;
  const open = new Map<IncomingMessage, ServerResponse>();
  const unhandled: unknown[] = [];
  const warnings: Error[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  const onWarning = (warning: Error) => warnings.push(warning);

  before(async () => {
    server = createServer((req, res) => {
      open.set(req, res);
      res.on('close', () => open.delete(req));
      const query = new URL(req.url ?? '/', 'http://x').searchParams;
      const next = script[served.length];
      served.push({ query, answer: next });
      if (next !== undefined) void play(next, res);
      // Past the script, requests are held: the run is over, nothing more to answer.
    });
    server.on('clientError', (_error, socket) => {
      refused++;
      if (socket.writable) socket.end('HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n');
      else socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'fixture', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'fixture' }],
      contexts: [{ name: 'fixture', cluster: 'fixture', user: 'fixture' }],
      currentContext: 'fixture',
    });
    process.on('unhandledRejection', onUnhandled);
    process.on('warning', onWarning);
  });

  after(async () => {
    process.off('unhandledRejection', onUnhandled);
    process.off('warning', onWarning);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('retries every answer except a fatal status, ends only with a ListWatchError, and leaves nothing open', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(answer, { minLength: 1, maxLength: 8 }), fc.boolean(), fc.boolean(), fc.constantFrom(0, 2, 500), async (answers, streamingList, transform, pageSize) => {
        // Runs must not see each other's leftovers (a failed run may leave a request open).
        for (const res of open.values()) res.destroy();
        open.clear();
        script = answers;
        served = [];
        refused = 0;
        unhandled.length = 0;
        warnings.length = 0;
        const events: ListWatchEvent[] = [];
        const retries: number[] = [];
        const retriedCodes: number[] = [];
        let error: unknown;
        let completed = false;
        const monitor: ListWatchMonitor = {
          retry: (info) => {
            retries.push(info.delayMs);
            if (info.code !== undefined) retriedCodes.push(info.code);
          },
        };
        const subscription = listWatch(kubeConfig, { version: 'v1', resource: 'configmaps', namespace: 'default' }, {
          backoff: { initialMs: 1, maxMs: 5 },
          scheduler: dilatedScheduler(100),
          idleTimeout: 4000,
          logger: silentLogger,
          monitor,
          pageSize,
          streamingList,
          ...(transform ? { transform: dropManagedFields<KubeObject> } : {}),
        }).subscribe({ next: (e) => events.push(e), error: (e: unknown) => (error = e), complete: () => (completed = true) });
        // A Retry-After longer than a second is waited out in full: the run ends there. So does a
        // request the server refuses outright, once it has been retried: the script cannot go on.
        const waitingLong = () => retries.some((ms) => ms >= 1000);
        await waitFor(() => error !== undefined || served.length > answers.length || waitingLong() || refused >= 2, `a request after each of ${answers.length} answers`);
        subscription.unsubscribe();
        await waitFor(() => open.size === 0, `every request closed after unsubscribing (open: ${open.size})`, 3000);
        // Warnings and rejections surface a tick or two later.
        await new Promise((resolve) => setImmediate(resolve));

        expect(completed, 'the source never completes on its own').to.equal(false);
        if (error !== undefined) {
          expect(error, String(error)).to.be.instanceOf(ListWatchError);
          const { code } = error as ListWatchError;
          expect(NO_RETRY_FIXES.has(code), `ended on ${code}, which a retry may fix: ${(error as Error).message}`).to.equal(true);
          const last = served[served.length - 1];
          expect(canBeFatal(last?.answer, last?.query ?? new URLSearchParams(), code), `answer ${served.length} can end the source with ${code}`).to.equal(true);
        }
        // And the other way round: a status no retry can fix is never retried, once the source has read it
        // (but a streaming list rejected with 400 or 422, which is listed page by page instead). Told by
        // the source's own monitor, so a busy machine on which the 40 ms idle timeout gives up on a slow
        // answer before its status is read does not count against it.
        const fatalRetried = retriedCodes.filter((c) => NO_RETRY_FIXES.has(c) && !(streamingList && (c === 400 || c === 422)));
        expect(fatalRetried, 'statuses no retry can fix, retried').to.deep.equal([]);
        for (const e of events) {
          if (e.type === 'Synced' || e.type === 'Bookmark') expect(e.resourceVersion).to.be.a('string').and.not.equal('');
          if ('object' in e) expect(e.object !== null && typeof e.object === 'object', `${e.type} carries an object`).to.equal(true);
        }
        expect(unhandled, 'no unhandled rejection').to.deep.equal([]);
        expect(warnings.map((w) => `${w.name}: ${w.message}`), 'no process warning').to.deep.equal([]);
      }),
      { numRuns: 200 },
    );
  });
});
