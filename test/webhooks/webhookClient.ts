import { request } from 'node:https';
import type { PeerCertificate, TLSSocket } from 'node:tls';

/** POSTs to a webhook server over HTTPS, trusting `ca`, as kube-apiserver does. */
export interface PostResult {
  status: number;
  text: string;
  json: () => Record<string, unknown>;
  certificate: PeerCertificate;
}

export function post(url: string, ca: string, body: string | Buffer, headers: Record<string, string> = { 'Content-Type': 'application/json' }, method = 'POST'): Promise<PostResult> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, ca, headers, agent: false }, (res) => {
      const certificate = (res.socket as TLSSocket).getPeerCertificate();
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, text, json: () => JSON.parse(text) as Record<string, unknown>, certificate });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}
