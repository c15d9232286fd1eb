/**
 * What admission webhooks cost a write of the embedded API server: ConfigMap
 * creates over HTTP (one at a time) with no webhook registered,
 * with one validating webhook, and with a mutating and a validating one,
 * both served over HTTPS by rxkube's webhook server in the same process.
 * Each figure is printed with its ratio to the first, measured in the same
 * run: the price of the dry run, the HTTPS calls and the second write.
 *
 * Each webhook call opens its own TLS connection (the server keeps none
 * open between writes), which is most of the cost measured here.
 *
 * BENCH_WRITES=n (default 1,000 per case) runs a shorter version.
 *
 * Run: npm run bench:webhooks
 */
import { silentLogger } from 'rxkube';
import { startApiServer } from 'rxkube/testing';
import { allow, mutatingWebhook, selfSignedCertificates, startWebhookServer, validatingWebhook } from 'rxkube/webhooks';

const WRITES = Number(process.env.BENCH_WRITES ?? 1_000);

const certs = await selfSignedCertificates();
const webhooks = await startWebhookServer({
  port: 0,
  host: '127.0.0.1',
  tls: certs,
  webhooks: {
    '/validate': validatingWebhook(() => allow()),
    '/mutate': mutatingWebhook<{ metadata: { labels?: Record<string, string> } }>((o) => {
      o.metadata.labels = { ...o.metadata.labels, defaulted: 'true' };
    }),
  },
});
const server = await startApiServer({ logger: silentLogger });

async function send(method: string, path: string, body: unknown): Promise<number> {
  const response = await fetch(`${server.url}${path}`, { method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  await response.arrayBuffer();
  return response.status;
}

function hook(kind: 'validate' | 'mutate'): unknown {
  return {
    name: `${kind}.bench.rxkube.dev`,
    admissionReviewVersions: ['v1'],
    sideEffects: 'None',
    clientConfig: { url: `https://127.0.0.1:${webhooks.port}/${kind}`, caBundle: certs.caBundle },
    rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
  };
}

async function measure(label: string): Promise<number> {
  const started = performance.now();
  for (let i = 0; i < WRITES; i++) {
    const status = await send('POST', '/api/v1/namespaces/default/configmaps', { metadata: { name: `${label}-${i}` }, data: { i: String(i) } });
    if (status !== 201) throw new Error(`create ${label}-${i} answered ${status}`);
  }
  return WRITES / ((performance.now() - started) / 1000);
}

try {
  const plain = await measure('plain');
  await send('POST', '/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations', { metadata: { name: 'v' }, webhooks: [hook('validate')] });
  const validated = await measure('validated');
  await send('POST', '/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', { metadata: { name: 'm' }, webhooks: [hook('mutate')] });
  const both = await measure('both');
  const row = (name: string, rate: number): string => `${name.padEnd(34)} ${rate.toFixed(0).padStart(7)} creates/s   ${(rate / plain).toFixed(2)} × no webhook`;
  console.log(`ConfigMap creates over HTTP, ${WRITES} per case`);
  console.log(row('no webhook (reference)', plain));
  console.log(row('one validating webhook', validated));
  console.log(row('a mutating and a validating one', both));
} finally {
  await server.close();
  await webhooks.close();
}
