import { generateKeyPair, randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { promisify } from 'node:util';

/**
 * A self-signed certificate for the server's TLS, made at start, for
 * `localhost`, 127.0.0.1, ::1 and the host it listens on, valid for a year.
 * TLS is what makes kubectl (client-go) send a kubeconfig's credentials at
 * all: over plain HTTP it drops them. The kubeconfigs mark the cluster
 * `insecure-skip-tls-verify`, so nothing needs to trust it. The key comes
 * from Node's crypto (forge's own generator is slow pure JavaScript); the
 * certificate is written by `node-forge`, loaded only when TLS is asked for.
 */

export interface ServingCertificate {
  /** The private key, PEM. */
  readonly key: string;
  /** The certificate, PEM. */
  readonly cert: string;
}

export async function servingCertificate(host: string, nowMs: number): Promise<ServingCertificate> {
  const forge = (await import('node-forge')).default;
  const keys = await promisify(generateKeyPair)('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  const ips = [...new Set(['127.0.0.1', '::1', ...(isIP(host) !== 0 ? [host] : [])])];
  const dns = [...new Set(['localhost', ...(isIP(host) === 0 ? [host] : [])])];
  const cert = forge.pki.createCertificate();
  // A positive serial of 16 random bytes, as RFC 5280 asks.
  const serial = randomBytes(16);
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x01;
  cert.serialNumber = serial.toString('hex');
  cert.publicKey = forge.pki.publicKeyFromPem(keys.publicKey);
  cert.validity.notBefore = new Date(nowMs - 60_000);
  cert.validity.notAfter = new Date(nowMs + 365 * 24 * 3600 * 1000);
  const name = [{ name: 'commonName', value: 'rxkube' }];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [...dns.map((value) => ({ type: 2, value })), ...ips.map((ip) => ({ type: 7, ip }))] },
  ]);
  cert.sign(forge.pki.privateKeyFromPem(keys.privateKey), forge.md.sha256.create());
  return { key: keys.privateKey, cert: forge.pki.certificateToPem(cert) };
}
