import type forgeTypes from 'node-forge';
import { generateKeyPair, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

/**
 * Serving certificates for the webhook server: read from files in the
 * layout cert-manager and a Secret volume give (`tls.crt`, `tls.key`), or,
 * for development and tests, a CA and a serving certificate signed by it,
 * made here with `node-forge` on keys from Node's crypto (no openssl). The CA's
 * PEM, base64-encoded, is the `caBundle` a webhook configuration carries.
 */

/** A certificate chain and its private key, PEM. */
export interface ServingCertificate {
  /** The serving certificate, then any intermediates, PEM. */
  cert: string;
  /** The private key of `cert`, PEM; keep it secret. */
  key: string;
}

/** What `selfSignedCertificates` makes: a serving certificate and key, and the CA to trust it by. */
export interface SelfSignedCertificates extends ServingCertificate {
  /** The CA that signed `cert`, PEM. */
  caCert: string;
  /** `caCert` in base64: `clientConfig.caBundle` of a webhook configuration, `spec.conversion.webhook.clientConfig.caBundle` of a CRD. */
  caBundle: string;
}

/** What `selfSignedCertificates` makes the certificate for, and how long it is valid. */
export interface SelfSignedOptions {
  /** DNS names the serving certificate is for (default `localhost`). */
  dnsNames?: readonly string[];
  /** IP addresses it is for (default `127.0.0.1` and `::1`). */
  ipAddresses?: readonly string[];
  /** When the certificates start being valid (default: a minute ago, to allow for clock skew). */
  notBefore?: Date;
  /** When they stop being valid (default: a year after `notBefore`). */
  notAfter?: Date;
}

function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] as number) & 0x7f; // a positive integer, as RFC 5280 wants
  return bytes.toString('hex');
}

type Forge = typeof forgeTypes;

/** node-forge is loaded on first use: a process that reads its certificates from files never pays for it. */
async function loadForge(): Promise<Forge> {
  return (await import('node-forge')).default;
}

/** An RSA key pair made by Node's crypto (forge's own generator is pure JavaScript and slow), in forge's form. */
async function rsaKeys(forge: Forge): Promise<{ publicKey: forgeTypes.pki.rsa.PublicKey; privateKey: forgeTypes.pki.rsa.PrivateKey }> {
  const { publicKey, privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048, publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } });
  return { publicKey: forge.pki.publicKeyFromPem(publicKey), privateKey: forge.pki.privateKeyFromPem(privateKey) };
}

function certificate(forge: Forge, subject: string, publicKey: forgeTypes.pki.PublicKey, notBefore: Date, notAfter: Date, extensions: object[]): forgeTypes.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.serialNumber = serialNumber();
  cert.publicKey = publicKey;
  cert.validity.notBefore = notBefore;
  cert.validity.notAfter = notAfter;
  cert.setSubject([{ name: 'commonName', value: subject }]);
  cert.setExtensions([...extensions, { name: 'subjectKeyIdentifier' }]);
  return cert;
}

/** A fresh CA and a serving certificate it signed, for a webhook server in development or a test. */
export async function selfSignedCertificates(options: SelfSignedOptions = {}): Promise<SelfSignedCertificates> {
  const notBefore = options.notBefore ?? new Date(Date.now() - 60_000);
  const notAfter = options.notAfter ?? new Date(notBefore.getTime() + 365 * 24 * 3600_000);
  const forge = await loadForge();
  const caKeys = await rsaKeys(forge);
  const ca = certificate(forge, 'rxkube webhook CA', caKeys.publicKey, notBefore, notAfter, [
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
  ]);
  ca.setIssuer(ca.subject.attributes);
  ca.sign(caKeys.privateKey, forge.md.sha256.create());
  const keys = await rsaKeys(forge);
  const dnsNames = options.dnsNames ?? ['localhost'];
  const ips = options.ipAddresses ?? ['127.0.0.1', '::1'];
  const serving = certificate(forge, dnsNames[0] ?? ips[0] ?? 'webhook', keys.publicKey, notBefore, notAfter, [
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [...dnsNames.map((value) => ({ type: 2, value })), ...ips.map((ip) => ({ type: 7, ip }))] },
    { name: 'authorityKeyIdentifier', keyIdentifier: ca.generateSubjectKeyIdentifier().getBytes() },
  ]);
  serving.setIssuer(ca.subject.attributes);
  serving.sign(caKeys.privateKey, forge.md.sha256.create());
  const caCert = forge.pki.certificateToPem(ca);
  return {
    cert: forge.pki.certificateToPem(serving),
    key: forge.pki.privateKeyToPem(keys.privateKey),
    caCert,
    caBundle: Buffer.from(caCert).toString('base64'),
  };
}

/** The file names of a certificate directory, cert-manager's by default. */
export interface CertificateFiles {
  /** The directory holding the files, such as a mounted Secret volume. */
  certDir: string;
  /** The certificate file's name within `certDir` (default `tls.crt`). */
  certName?: string;
  /** The key file's name within `certDir` (default `tls.key`). */
  keyName?: string;
}

/** Reads the certificate and key of a directory; the error names the file that could not be read. */
export async function readCertificateFiles(files: CertificateFiles): Promise<ServingCertificate> {
  const certPath = join(files.certDir, files.certName ?? 'tls.crt');
  const keyPath = join(files.certDir, files.keyName ?? 'tls.key');
  const read = async (path: string): Promise<string> => {
    try {
      return await readFile(path, 'utf8');
    } catch (error) {
      throw new Error(`webhook server: cannot read ${path}: ${(error as Error).message}`, { cause: error });
    }
  };
  return { cert: await read(certPath), key: await read(keyPath) };
}
