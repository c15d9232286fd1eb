import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';

/**
 * One call of a webhook as kube-apiserver makes it: POST the review as
 * JSON to `clientConfig.url` with `?timeout=Ns`, over TLS verified against
 * the `caBundle` (a wrong or expired CA fails the call, as it does in kube),
 * within `timeoutSeconds`. The errors say what kube's say, in its words,
 * so that a client sees the same message from either server.
 */

export class WebhookCallError extends Error {
  override readonly name = 'WebhookCallError';
}

const tlsCodes: Readonly<Record<string, string>> = {
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'x509: certificate signed by unknown authority',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'x509: certificate signed by unknown authority',
  SELF_SIGNED_CERT_IN_CHAIN: 'x509: certificate signed by unknown authority',
  DEPTH_ZERO_SELF_SIGNED_CERT: 'x509: certificate signed by unknown authority',
  CERT_HAS_EXPIRED: 'x509: certificate has expired or is not yet valid',
  CERT_NOT_YET_VALID: 'x509: certificate has expired or is not yet valid',
  ERR_TLS_CERT_ALTNAME_INVALID: 'x509: certificate is not valid for this host',
};

function describeError(error: NodeJS.ErrnoException, url: URL): string {
  const code = error.code ?? '';
  if (code in tlsCodes) return `tls: failed to verify certificate: ${tlsCodes[code]}`;
  if (code === 'ECONNREFUSED') return `dial tcp ${url.host}: connect: connection refused`;
  return error.message;
}

/** The URL a review is POSTed to: the configured one with the deadline kube adds. */
export function reviewUrl(url: string, timeoutSeconds: number): URL {
  const target = new URL(url);
  target.searchParams.set('timeout', `${timeoutSeconds}s`);
  return target;
}

/** POSTs `review` and resolves with the parsed answer; rejects with a `WebhookCallError` in kube's words. */
export function callWebhook(url: URL, ca: string | undefined, timeoutSeconds: number, review: unknown): Promise<unknown> {
  const post = `Post ${JSON.stringify(url.toString())}`;
  const body = JSON.stringify(review);
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'http:' ? httpRequest : httpsRequest;
    let timedOut = false;
    const req = send(url, { method: 'POST', headers: { 'Content-Type': 'application/json', Accept: 'application/json', 'Content-Length': Buffer.byteLength(body) }, agent: false, ...(ca !== undefined ? { ca } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (error) => reject(new WebhookCallError(`failed to call webhook: ${post}: ${error.message}`)));
      res.on('end', () => {
        clearTimeout(timer);
        const text = Buffer.concat(chunks).toString('utf8');
        if ((res.statusCode ?? 0) < 200 || (res.statusCode ?? 0) >= 300) {
          reject(new WebhookCallError(`failed to call webhook: an error on the server (${JSON.stringify(text.slice(0, 200))}) has prevented the request from succeeding`));
          return;
        }
        try {
          resolve(JSON.parse(text));
        } catch {
          reject(new WebhookCallError(`received invalid webhook response: the body is not JSON: ${JSON.stringify(text.slice(0, 200))}`));
        }
      });
    });
    const timer = setTimeout(() => {
      timedOut = true;
      req.destroy();
    }, timeoutSeconds * 1000);
    req.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(new WebhookCallError(`failed to call webhook: ${post}: ${timedOut ? 'context deadline exceeded' : describeError(error, url)}`));
    });
    req.end(body);
  });
}
