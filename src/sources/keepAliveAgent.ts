import * as http from 'node:http';
import * as https from 'node:https';

/** The TLS material of a request: a connection made with one set may serve only requests with the same. */
const MATERIAL = ['ca', 'cert', 'key', 'pfx', 'passphrase', 'rejectUnauthorized', 'servername', 'ciphers', 'crl', 'secureProtocol'] as const;

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Buffer.isBuffer(a) && Buffer.isBuffer(b)) return a.equals(b);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  return false;
}

/**
 * One keep-alive agent for the requests of one source, in place of the new
 * agent `KubeConfig.applyToHTTPSOptions` makes for every request: with that
 * one, each list page (200 of them for 100,000 objects) opened a connection
 * of its own, and over https paid a TLS handshake for it.
 *
 * The agent is kept only while the request's TLS material (CA, client
 * certificate and key, ...) stays the same; when the kubeconfig gives other
 * material (a rotated client certificate), the next request gets a new
 * agent. Proxy agents are left as the kubeconfig made them. A source sends
 * one request at a time, so replacing the agent never cuts one short.
 * `destroy()` closes its idle connections (the source stopped).
 */
export class KeepAliveAgent {
  private agent: http.Agent | undefined;
  private material: unknown[] = [];

  /** Puts the kept agent into `options` (already given the kubeconfig's), if the kubeconfig's agent is a plain one. */
  apply(options: https.RequestOptions): void {
    const given = options.agent;
    if (given === undefined || given === false) return;
    const Agent = given.constructor === https.Agent ? https.Agent : given.constructor === http.Agent ? http.Agent : undefined;
    if (Agent === undefined) return;
    const material = MATERIAL.map((name) => options[name]);
    if (this.agent === undefined || !(this.agent instanceof Agent) || !material.every((value, i) => same(value, this.material[i]))) {
      this.agent?.destroy();
      const made = (given as http.Agent & { options: http.AgentOptions }).options;
      this.agent = new Agent({ ...made, keepAlive: true });
      this.material = material;
    }
    options.agent = this.agent;
  }

  destroy(): void {
    this.agent?.destroy();
    this.agent = undefined;
  }
}
