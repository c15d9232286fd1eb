import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, skip, Subject, VirtualTimeScheduler } from 'rxjs';
import { admissionReview, conversionReview } from 'rxkube/testing';
import {
  allow,
  conversionWebhook,
  deny,
  maxReviewBytes,
  mutatingWebhook,
  selfSignedCertificates,
  startWebhookServer,
  validatingWebhook,
  type SelfSignedCertificates,
  type WebhookServer,
  type WebhookServerOptions,
} from 'rxkube/webhooks';
import { post } from './webhookClient.js';

const pa = (spec: Record<string, unknown>) => ({ apiVersion: 'autoscaling.rxkube.dev/v1', kind: 'PodAutoscaler', metadata: { name: 'web', namespace: 'default' }, spec });

describe('the webhook server', function () {
  let certs: SelfSignedCertificates;
  let server: WebhookServer | undefined;
  const servers: WebhookServer[] = [];

  before(async () => {
    certs = await selfSignedCertificates();
  });
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
    server = undefined;
  });

  async function start(options: Partial<WebhookServerOptions> = {}): Promise<WebhookServer> {
    const s = await startWebhookServer({
      port: 0,
      host: '127.0.0.1',
      tls: { cert: certs.cert, key: certs.key },
      webhooks: {
        '/validate': validatingWebhook((request) => {
          const spec = (request.object as unknown as { spec: { min: number; max: number } }).spec;
          return spec.min <= spec.max ? allow(spec.min === 0 ? ['min is 0'] : undefined) : deny('spec.min must be at most spec.max', { code: 422, reason: 'Invalid' });
        }),
        '/mutate': mutatingWebhook<{ metadata: object; spec: { min?: number; max: number } }>((object) => {
          object.spec.min ??= 1;
        }),
        '/fail': validatingWebhook(() => {
          throw new Error('the database is down');
        }),
        '/convert': conversionWebhook([
          {
            group: 'autoscaling.rxkube.dev',
            kind: 'PodAutoscaler',
            hub: 'v2',
            spokes: {
              v1: {
                toHub: (o) => {
                  const { spec, ...rest } = o as unknown as { spec: { min: number; max: number } };
                  if (spec.min < 0) throw new Error('spec.min is negative');
                  return { ...rest, spec: { replicas: { min: spec.min, max: spec.max } } } as never;
                },
                fromHub: (o) => {
                  const { spec, ...rest } = o as unknown as { spec: { replicas: { min: number; max: number } } };
                  return { ...rest, spec: { min: spec.replicas.min, max: spec.replicas.max } } as never;
                },
              },
            },
          },
        ]),
      },
      ...options,
    });
    servers.push(s);
    server = s;
    return s;
  }

  const send = (path: string, body: unknown, s = server as WebhookServer) => post(`${s.url}${path}`, certs.caCert, JSON.stringify(body));
  const responseOf = (json: Record<string, unknown>) => json.response as Record<string, unknown>;

  it('answers a validating review allowed, with warnings, or denied with the code, reason and message', async () => {
    await start();
    const ok = await send('/validate', admissionReview('CREATE', pa({ min: 0, max: 3 }), { uid: 'u1' }));
    expect(ok.status).to.equal(200);
    expect(ok.json()).to.deep.equal({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: 'u1', allowed: true, warnings: ['min is 0'] } });
    const denied = await send('/validate', admissionReview('CREATE', pa({ min: 5, max: 3 }), { uid: 'u2' }));
    expect(responseOf(denied.json())).to.deep.equal({
      uid: 'u2',
      allowed: false,
      status: { code: 422, message: 'spec.min must be at most spec.max', status: 'Failure', reason: 'Invalid' },
    });
  });

  it('answers a mutating review with the RFC 6902 patch from the request object to the handler object', async () => {
    await start();
    const answer = responseOf((await send('/mutate', admissionReview('CREATE', pa({ max: 3 }), { uid: 'm' }))).json());
    expect(answer.patchType).to.equal('JSONPatch');
    expect(JSON.parse(Buffer.from(answer.patch as string, 'base64').toString())).to.deep.equal([{ op: 'add', path: '/spec/min', value: 1 }]);
    const unchanged = responseOf((await send('/mutate', admissionReview('CREATE', pa({ min: 2, max: 3 }), { uid: 'n' }))).json());
    expect(unchanged).to.deep.equal({ uid: 'n', allowed: true });
  });

  it('answers allowed: false with code 500 and the message when a handler throws, and counts it as a panic', async () => {
    await start();
    const answer = responseOf((await send('/fail', admissionReview('CREATE', pa({}), { uid: 'f' }))).json());
    expect(answer).to.deep.equal({ uid: 'f', allowed: false, status: { code: 500, message: 'the database is down', status: 'Failure' } });
    const metrics = await (server as WebhookServer).registry.metrics();
    expect(metrics).to.include('controller_runtime_webhook_panics_total 1');
    expect(metrics).to.include('controller_runtime_webhook_requests_total{webhook="/fail",code="200"} 1');
  });

  it('gives an async handler a signal that aborts at the deadline in the URL, and answers code 500 then', async () => {
    const scheduler = new VirtualTimeScheduler();
    let aborted: unknown;
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    await start({
      scheduler,
      webhooks: {
        '/slow': validatingWebhook(
          (_request, signal) =>
            new Promise((resolve) => {
              started();
              signal.addEventListener('abort', () => {
                aborted = signal.reason;
                resolve(allow());
              });
            }),
        ),
      },
    });
    const answered = post(`${(server as WebhookServer).url}/slow?timeout=2s`, certs.caCert, JSON.stringify(admissionReview('CREATE', pa({}), { uid: 's' })));
    await running;
    scheduler.flush();
    const answer = responseOf((await answered).json());
    expect(answer).to.deep.equal({ uid: 's', allowed: false, status: { code: 500, message: 'the validating webhook did not answer within 2000 ms', status: 'Failure' } });
    expect(String(aborted)).to.include('timed out after 2000 ms');
    expect(scheduler.now()).to.equal(2000);
  });

  describe('a member named __proto__ (legal under x-kubernetes-preserve-unknown-fields) is data', () => {
    // Sent as JSON text: an object literal (or a copy made by assignment) would take "__proto__" for a prototype.
    const withProto = (review: unknown): string => JSON.stringify(review).replace('"spec":{', '"spec":{"__proto__":{"min":5},');
    const sendText = (path: string, text: string) => post(`${(server as WebhookServer).url}${path}`, certs.caCert, text);
    const patchOf = (answer: Record<string, unknown>): unknown => (answer.patch === undefined ? [] : JSON.parse(Buffer.from(answer.patch as string, 'base64').toString()));

    it('a defaulting handler finds the member itself, not a value inherited from it, and its patch keeps /spec/__proto__', async () => {
      const seen: boolean[] = [];
      await start({
        webhooks: {
          '/default': mutatingWebhook<{ metadata: object; spec: { min?: number } }>((object) => {
            seen.push(Object.hasOwn(object.spec, '__proto__'), Object.getPrototypeOf(object.spec) === Object.prototype);
            object.spec.min ??= 1;
          }),
        },
      });
      const answer = responseOf((await sendText('/default', withProto(admissionReview('CREATE', pa({ max: 3 }), { uid: 'p' })))).json());
      expect(seen).to.deep.equal([true, true]);
      expect(patchOf(answer)).to.deep.equal([{ op: 'add', path: '/spec/min', value: 1 }]);
    });

    it('a handler that changes nothing answers without a patch', async () => {
      await start({ webhooks: { '/noop': mutatingWebhook(() => {}) } });
      const answer = responseOf((await sendText('/noop', withProto(admissionReview('CREATE', pa({ max: 3 }), { uid: 'n' })))).json());
      expect(answer).to.deep.equal({ uid: 'n', allowed: true });
    });

    it('conversion keeps the member in the converted object', async () => {
      await start({
        webhooks: {
          '/convert-all': conversionWebhook([
            { group: 'autoscaling.rxkube.dev', kind: 'PodAutoscaler', hub: 'v2', spokes: { v1: { toHub: (o) => o, fromHub: (o) => o } } },
          ]),
        },
      });
      const answer = responseOf((await sendText('/convert-all', withProto(conversionReview('autoscaling.rxkube.dev/v2', [pa({ max: 3 })], 'c')))).json());
      expect(JSON.stringify(answer.convertedObjects)).to.equal(
        '[{"apiVersion":"autoscaling.rxkube.dev/v2","kind":"PodAutoscaler","metadata":{"name":"web","namespace":"default"},"spec":{"__proto__":{"min":5},"max":3}}]',
      );
    });
  });

  describe('refuses what kube-apiserver would never send', () => {
    const review = admissionReview('CREATE', pa({ min: 1, max: 2 }), { uid: 'x' });
    const cases: Array<[string, string | Buffer, number, string, Record<string, string>?]> = [
      ['a body that is not JSON', '{"apiVersion": nope', 400, 'the body is not JSON'],
      ['a review of another kind', JSON.stringify({ ...review, kind: 'ConversionReview' }), 400, 'expected a admission.k8s.io/v1 AdmissionReview, got apiVersion "admission.k8s.io/v1" kind "ConversionReview"'],
      ['a review of another version', JSON.stringify({ ...review, apiVersion: 'admission.k8s.io/v1beta1' }), 400, 'got apiVersion "admission.k8s.io/v1beta1"'],
      ['a review without request.uid', JSON.stringify({ ...review, request: { ...review.request, uid: undefined } }), 400, 'the AdmissionReview has no request.uid'],
      ['a review without a request', JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }), 400, 'the AdmissionReview has no request'],
      ['a body that is not application/json', JSON.stringify(review), 400, 'contentType=text/plain, expected application/json', { 'Content-Type': 'text/plain' }],
      ['an array nested 100,000 levels deep', `${'['.repeat(100_000)}${']'.repeat(100_000)}`, 400, 'the body nests arrays and objects more than 1000 levels deep'],
      [
        'a review whose object nests 100,000 levels deep',
        JSON.stringify(review).replace('"spec":{', `"spec":{"deep":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)},`),
        400,
        'the body nests arrays and objects more than 1000 levels deep',
      ],
      ['an array', '[1,2,3]', 400, 'expected a admission.k8s.io/v1 AdmissionReview object, got an array of 3'],
      ['a body over 3 MiB', Buffer.alloc(maxReviewBytes + 1, 32), 413, `at most ${maxReviewBytes}`],
      ['a body over 3 MiB sent in chunks without a length', Buffer.alloc(maxReviewBytes + 1, 32), 413, `over ${maxReviewBytes} bytes`, { 'Content-Type': 'application/json', 'Transfer-Encoding': 'chunked' }],
    ];
    for (const [what, body, status, message, headers] of cases) {
      it(`answers ${status} for ${what}, logs it and counts it`, async () => {
        const warnings: string[] = [];
        const logger = { debug() {}, info() {}, error() {}, warn: (fields: unknown) => warnings.push(String((fields as { message?: unknown }).message)) };
        await start({ logger });
        const answer = await post(`${(server as WebhookServer).url}/validate`, certs.caCert, body, headers);
        expect(answer.status).to.equal(status);
        expect((answer.json() as { message: string }).message).to.include(message);
        expect(warnings.join('\n')).to.include(message);
        expect(await (server as WebhookServer).registry.metrics()).to.include(`controller_runtime_webhook_requests_total{webhook="/validate",code="${status}"} 1`);
      });
    }

    it('answers 404 for a path it does not serve and 405 for a GET', async () => {
      await start();
      expect((await send('/nowhere', review)).status).to.equal(404);
      expect(await (server as WebhookServer).registry.metrics()).to.not.include('/nowhere');
      expect((await post(`${(server as WebhookServer).url}/validate`, certs.caCert, '', {}, 'GET')).status).to.equal(405);
    });

    it('still serves after every bad request', async () => {
      await start();
      await post(`${(server as WebhookServer).url}/validate`, certs.caCert, 'nope');
      expect(responseOf((await send('/validate', review)).json()).allowed).to.equal(true);
    });
  });

  it('reports latency and in-flight requests under controller-runtime names', async () => {
    await start();
    await send('/validate', admissionReview('CREATE', pa({ min: 1, max: 2 })));
    const metrics = await (server as WebhookServer).registry.metrics();
    expect(metrics).to.include('controller_runtime_webhook_latency_seconds_count{webhook="/validate"} 1');
    expect(metrics).to.include('controller_runtime_webhook_requests_in_flight{webhook="/validate"} 0');
  });

  describe('conversion', () => {
    it('converts every object of a review through the hub, setting the desired apiVersion', async () => {
      await start();
      const objects = [pa({ min: 1, max: 2 }), { ...pa({ min: 3, max: 4 }), metadata: { name: 'b', namespace: 'default' } }];
      const answer = responseOf((await send('/convert', conversionReview('autoscaling.rxkube.dev/v2', objects, 'c'))).json());
      expect(answer).to.deep.equal({
        uid: 'c',
        result: { status: 'Success' },
        convertedObjects: [
          { apiVersion: 'autoscaling.rxkube.dev/v2', kind: 'PodAutoscaler', metadata: { name: 'web', namespace: 'default' }, spec: { replicas: { min: 1, max: 2 } } },
          { apiVersion: 'autoscaling.rxkube.dev/v2', kind: 'PodAutoscaler', metadata: { name: 'b', namespace: 'default' }, spec: { replicas: { min: 3, max: 4 } } },
        ],
      });
      const back = responseOf((await send('/convert', conversionReview('autoscaling.rxkube.dev/v1', answer.convertedObjects as never))).json());
      expect((back.convertedObjects as unknown[])[1]).to.deep.equal({ ...objects[1] });
    });

    it('fails the review as a whole, naming the object, when one cannot be converted', async () => {
      await start();
      const objects = [pa({ min: 1, max: 2 }), { ...pa({ min: -1, max: 4 }), metadata: { name: 'bad', namespace: 'default' } }];
      const answer = responseOf((await send('/convert', conversionReview('autoscaling.rxkube.dev/v2', objects, 'c'))).json());
      expect(answer).to.deep.equal({
        uid: 'c',
        convertedObjects: [],
        result: { status: 'Failure', message: 'PodAutoscaler default/bad: converting v1 to the hub v2 failed: spec.min is negative' },
      });
    });

    it('fails a review asking for a version or a kind it does not know', async () => {
      await start();
      const unknownVersion = responseOf((await send('/convert', conversionReview('autoscaling.rxkube.dev/v3', [pa({ min: 1, max: 2 })]))).json());
      expect((unknownVersion.result as { message: string }).message).to.equal('PodAutoscaler default/web: version v3 of PodAutoscaler is unknown (hub v2, spokes v1)');
      const unknownKind = responseOf((await send('/convert', conversionReview('autoscaling.rxkube.dev/v2', [{ ...pa({}), kind: 'Other' }]))).json());
      expect((unknownKind.result as { message: string }).message).to.include('no conversion is registered for kind Other');
    });

    it('answers 400 for a ConversionReview without objects', async () => {
      await start();
      const answer = await send('/convert', { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', request: { uid: 'u', desiredAPIVersion: 'x/v1' } });
      expect(answer.status).to.equal(400);
      expect(answer.json().message).to.equal('the ConversionReview has no request.objects list');
    });
  });

  describe('certificates from files', () => {
    let dir: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'rxkube-certs-'));
      await writeFile(join(dir, 'tls.crt'), certs.cert);
      await writeFile(join(dir, 'tls.key'), certs.key);
    });
    afterEach(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('serves tls.crt and tls.key and serves the new pair once the reload signal fires', async () => {
      const reload = new Subject<void>();
      const s = await start({ tls: { certDir: dir }, reload });
      const before = await send('/validate', admissionReview('CREATE', pa({ min: 1, max: 2 })), s);
      const next = await selfSignedCertificates();
      await writeFile(join(dir, 'tls.crt'), next.cert);
      await writeFile(join(dir, 'tls.key'), next.key);
      const reloaded = firstValueFrom(s.certificates.pipe(skip(1)));
      reload.next();
      expect((await reloaded).cert).to.equal(next.cert);
      const after = await post(`${s.url}/validate`, next.caCert, JSON.stringify(admissionReview('CREATE', pa({ min: 1, max: 2 }))));
      expect(after.status).to.equal(200);
      expect(after.certificate.fingerprint256).to.not.equal(before.certificate.fingerprint256);
    });

    it('reloads when the directory changes, as a rotated Secret volume does', async () => {
      const s = await start({ tls: { certDir: dir } });
      const next = await selfSignedCertificates();
      const reloaded = firstValueFrom(s.certificates.pipe(skip(1)));
      await writeFile(join(dir, 'tls.key'), next.key);
      await writeFile(join(dir, 'tls.crt'), next.cert);
      expect((await reloaded).cert).to.equal(next.cert);
    });

    it('keeps serving the old pair when the new files do not load, and logs why', async () => {
      const warnings: string[] = [];
      const logger = { debug() {}, info() {}, error() {}, warn: (_f: unknown, message?: string) => warnings.push(message ?? '') };
      const reload = new Subject<void>();
      const s = await start({ tls: { certDir: dir }, reload, logger });
      const other = await selfSignedCertificates();
      await writeFile(join(dir, 'tls.crt'), other.cert); // a key that does not match the certificate
      await s.reloadCertificates();
      expect(warnings).to.include('webhook server: the certificate files do not load; serving the previous certificate');
      expect((await send('/validate', admissionReview('CREATE', pa({ min: 1, max: 2 })), s)).status).to.equal(200);
    });

    it('fails to start naming the file it cannot read', async () => {
      await rm(join(dir, 'tls.key'));
      let error: unknown;
      await startWebhookServer({ port: 0, tls: { certDir: dir }, webhooks: {} }).then((s) => servers.push(s), (e: unknown) => (error = e));
      expect(String(error)).to.include(`cannot read ${join(dir, 'tls.key')}`);
    });
  });
});
