import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';

/**
 * A self-signed certificate for the server's TLS, made at start: an ECDSA
 * P-256 key and an X.509 v3 certificate for `localhost`, 127.0.0.1, ::1 and
 * the host it listens on, valid for a year. TLS is what makes kubectl
 * (client-go) send a kubeconfig's credentials at all: over plain HTTP it
 * drops them. The kubeconfigs mark the cluster `insecure-skip-tls-verify`,
 * so nothing needs to trust it. Node has no API that writes certificates,
 * so the DER is written here (only what such a certificate needs).
 */

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  const bytes: number[] = [];
  for (let v = n; v > 0; v >>= 8) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  return Buffer.concat([Buffer.from([tag]), length(body.length), body]);
}

const sequence = (...content: Buffer[]): Buffer => tlv(0x30, ...content);
const oid = (hex: string): Buffer => tlv(0x06, Buffer.from(hex, 'hex'));
const ecdsaWithSha256 = sequence(oid('2a8648ce3d040302'));

function utcTime(ms: number): Buffer {
  const iso = new Date(ms).toISOString();
  return tlv(0x17, Buffer.from(`${iso.slice(2, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}Z`, 'ascii'));
}

function ipBytes(ip: string): Buffer {
  if (isIP(ip) === 4) return Buffer.from(ip.split('.').map(Number));
  const [head, tail = ''] = ip.split('::');
  const groups = (s: string): string[] => (s === '' ? [] : s.split(':'));
  const h = groups(head);
  const t = groups(tail);
  const all = ip.includes('::') ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t] : h;
  return Buffer.concat(all.map((g) => Buffer.from(g.padStart(4, '0'), 'hex')));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return sequence(oid(id), ...(critical ? [tlv(0x01, Buffer.from([0xff]))] : []), tlv(0x04, value));
}

export interface ServingCertificate {
  /** PEM. */
  readonly key: string;
  readonly cert: string;
}

export function servingCertificate(host: string, nowMs: number): ServingCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const name = sequence(tlv(0x31, sequence(oid('550403'), tlv(0x0c, Buffer.from('rxkube', 'utf8')))));
  const serial = randomBytes(16);
  serial[0] = (serial[0] & 0x7f) | 0x01;
  const ips = [...new Set(['127.0.0.1', '::1', ...(isIP(host) !== 0 ? [host] : [])])];
  const dns = [...new Set(['localhost', ...(isIP(host) === 0 ? [host] : [])])];
  const altNames = sequence(...dns.map((d) => tlv(0x82, Buffer.from(d, 'ascii'))), ...ips.map((ip) => tlv(0x87, ipBytes(ip))));
  const extensions = tlv(
    0xa3,
    sequence(
      extension('551d0f', true, tlv(0x03, Buffer.from([0x05, 0xa0]))), // keyUsage: digitalSignature, keyEncipherment
      extension('551d25', false, sequence(oid('2b06010505070301'))), // extKeyUsage: serverAuth
      extension('551d13', true, sequence()), // basicConstraints: not a CA
      extension('551d11', false, altNames),
    ),
  );
  const tbs = sequence(
    tlv(0xa0, tlv(0x02, Buffer.from([0x02]))),
    tlv(0x02, serial),
    ecdsaWithSha256,
    name,
    sequence(utcTime(nowMs - 60_000), utcTime(nowMs + 365 * 24 * 3600 * 1000)),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    extensions,
  );
  const signature = sign('sha256', tbs, privateKey);
  const der = sequence(tbs, ecdsaWithSha256, tlv(0x03, Buffer.from([0x00]), signature));
  const lines = der.toString('base64').match(/.{1,64}/g) ?? [];
  return {
    key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    cert: `-----BEGIN CERTIFICATE-----\n${lines.join('\n')}\n-----END CERTIFICATE-----\n`,
  };
}
