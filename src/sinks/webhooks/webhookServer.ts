import { watch } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { Registry } from 'prom-client';
import { asyncScheduler, Observable, ReplaySubject, timer, type SchedulerLike, type Subscription } from 'rxjs';
import { defaultLogger, type Logger } from '../../logger.js';
import type { AdmissionWebhook } from './admission.js';
import { readCertificateFiles, type CertificateFiles, type ServingCertificate } from './certificates.js';
import type { ConversionWebhook } from './conversion.js';
import { MalformedReviewError, parseAdmissionReview, parseConversionReview, reviewTimeout } from './reviewParsing.js';
import type { AdmissionResponse, ConversionResponse } from './reviewTypes.js';
import { webhookMetrics, type WebhookMetrics } from './webhookMetrics.js';

/**
 * The HTTPS server kube-apiserver calls: each path serves one admission or
 * conversion endpoint. A malformed review gets HTTP 400 with the reason, a
 * body over 3 MiB 413, a handler that throws or misses the review's
 * deadline `allowed: false` with code 500 (a conversion: a `Failure`
 * result); every answer is counted under controller-runtime's metric names
 * and every fault logged. The certificate comes from files (reloaded when
 * the directory changes, as a rotated Secret volume does) or is given.
 */

export type WebhookHandler = AdmissionWebhook | ConversionWebhook;

/** How `startWebhookServer` listens, what it serves on which path, and where its certificate comes from. */
export interface WebhookServerOptions {
  /** Default 9443, controller-runtime's. Pass 0 for any free port; the bound one is in `port`. */
  port?: number;
  /** Default: every interface. */
  host?: string;
  /** A certificate directory (watched and reloaded) or a certificate in memory. */
  tls: CertificateFiles | ServingCertificate;
  /** Path (`/validate-podautoscaler`) to endpoint. */
  webhooks: Record<string, WebhookHandler>;
  /** Where the metrics go (default: a registry of the server's own, in `registry`). */
  registry?: Registry;
  /** Where handler failures, refused requests and certificate reloads are logged (default: pino to stderr). */
  logger?: Logger;
  /** Deadline of a review whose URL has no `timeout`, in ms (default 10 000, kube's default timeoutSeconds). */
  defaultTimeout?: number;
  /** Schedules the review deadlines (default `asyncScheduler`; a virtual one in tests). */
  scheduler?: SchedulerLike;
  /** When to re-read the certificate files (default: any change in `certDir`, seen by `fs.watch`). */
  reload?: Observable<unknown>;
}

/** A running webhook server, from `startWebhookServer`; `close()` it on shutdown. */
export interface WebhookServer {
  /** `https://host:port`, with the port bound. */
  readonly url: string;
  /** The port bound: the one asked for, or the one picked when 0 was passed. */
  readonly port: number;
  /** The registry the server's metrics are in: `options.registry` if given, else its own. */
  readonly registry: Registry;
  /** The certificate served, now and after each reload. */
  readonly certificates: Observable<ServingCertificate>;
  /** Re-reads the certificate files now; a pair that does not load is logged and the old one kept. */
  reloadCertificates(): Promise<void>;
  /** Stops listening, aborts reviews in flight and closes connections. */
  close(): Promise<void>;
}

/** kube-apiserver sends at most this much (its request size limit for webhooks). */
export const maxReviewBytes = 3 * 1024 * 1024;

class PayloadTooLarge extends Error {}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > maxReviewBytes) {
      reject(new PayloadTooLarge(`the body is ${declared} bytes; a review may have at most ${maxReviewBytes}`));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxReviewBytes) {
        reject(new PayloadTooLarge(`the body is over ${maxReviewBytes} bytes, the most a review may have`));
        req.removeAllListeners('data');
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function isFiles(tls: WebhookServerOptions['tls']): tls is CertificateFiles {
  return typeof (tls as CertificateFiles).certDir === 'string';
}

function directoryChanges(dir: string): Observable<unknown> {
  return new Observable((subscriber) => {
    const watcher = watch(dir, () => subscriber.next(undefined));
    watcher.on('error', (error) => subscriber.error(error));
    return () => watcher.close();
  });
}

/** Throws unless `pair` is a certificate and the private key of its public key (not a file caught half written). */
function checkPair(pair: ServingCertificate): void {
  if (!new X509Certificate(pair.cert).checkPrivateKey(createPrivateKey(pair.key))) throw new Error('tls.key is not the private key of tls.crt');
}

interface Answer {
  status: number;
  body: unknown;
}

/** Runs `work` until the review's deadline; at the deadline the signal aborts and the answer is `onTimeout`. */
function withDeadline<T>(ms: number, scheduler: SchedulerLike, inFlight: Set<AbortController>, work: (signal: AbortSignal) => Promise<T>, onTimeout: () => T): Promise<T> {
  const controller = new AbortController();
  inFlight.add(controller);
  let deadline: Subscription | undefined;
  const timedOut = new Promise<T>((resolve) => {
    deadline = timer(ms, scheduler).subscribe(() => {
      controller.abort(new Error(`the review timed out after ${ms} ms`));
      resolve(onTimeout());
    });
  });
  return Promise.race([work(controller.signal), timedOut]).finally(() => {
    deadline?.unsubscribe();
    inFlight.delete(controller);
  });
}

function admissionReview(response: AdmissionResponse): unknown {
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response };
}

function conversionReview(response: ConversionResponse): unknown {
  return { apiVersion: 'apiextensions.k8s.io/v1', kind: 'ConversionReview', response };
}

interface Serving {
  metrics: WebhookMetrics;
  logger: Logger;
  scheduler: SchedulerLike;
  defaultTimeout: number;
  inFlight: Set<AbortController>;
}

async function review(s: Serving, path: string, handler: WebhookHandler, url: URL, text: string): Promise<Answer> {
  const timeout = reviewTimeout(url.searchParams) ?? s.defaultTimeout;
  const failed = (error: unknown): string => {
    s.metrics.panicked();
    const message = error instanceof Error ? error.message : String(error);
    s.logger.error({ err: error, webhook: path }, 'webhook server: the handler failed');
    return message;
  };
  if (handler.type === 'conversion') {
    const request = parseConversionReview(text);
    const failure = (message: string): ConversionResponse => ({ uid: request.uid, convertedObjects: [], result: { status: 'Failure', message } });
    const response = await withDeadline(
      timeout,
      s.scheduler,
      s.inFlight,
      (signal) => handler.convert(request, signal).catch((error: unknown) => failure(failed(error))),
      () => failure(`the conversion timed out after ${timeout} ms`),
    );
    if (response.result.status === 'Failure') s.logger.warn({ webhook: path, uid: request.uid, message: response.result.message }, 'webhook server: conversion failed');
    return { status: 200, body: conversionReview(response) };
  }
  const request = parseAdmissionReview(text);
  const failure = (message: string): AdmissionResponse => ({ uid: request.uid, allowed: false, status: { code: 500, message, status: 'Failure' } });
  const response = await withDeadline(
    timeout,
    s.scheduler,
    s.inFlight,
    (signal) => handler.admit(request, signal).catch((error: unknown) => failure(failed(error))),
    () => {
      s.logger.warn({ webhook: path, uid: request.uid, timeout }, 'webhook server: the handler did not answer before the deadline');
      return failure(`the ${handler.type} webhook did not answer within ${timeout} ms`);
    },
  );
  return { status: 200, body: admissionReview({ ...response, uid: request.uid }) };
}

async function serve(s: Serving, webhooks: Record<string, WebhookHandler>, req: IncomingMessage): Promise<Answer> {
  const url = new URL(req.url ?? '/', 'https://webhook');
  const handler = Object.hasOwn(webhooks, url.pathname) ? webhooks[url.pathname] : undefined;
  if (handler === undefined) return { status: 404, body: { message: `no webhook is served at ${url.pathname}` } };
  if (req.method !== 'POST') return { status: 405, body: { message: `a review is POSTed, not sent with ${req.method}` } };
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim();
  if (type !== 'application/json') throw new MalformedReviewError(`contentType=${type || '(none)'}, expected application/json`);
  return review(s, url.pathname, handler, url, await readBody(req));
}

/** Starts the webhook server; resolves once it listens with its certificate loaded. */
export async function startWebhookServer(options: WebhookServerOptions): Promise<WebhookServer> {
  const logger = options.logger ?? defaultLogger({ part: 'webhookServer' });
  const registry = options.registry ?? new Registry();
  const s: Serving = {
    metrics: webhookMetrics(registry),
    logger,
    scheduler: options.scheduler ?? asyncScheduler,
    defaultTimeout: options.defaultTimeout ?? 10_000,
    inFlight: new Set(),
  };
  const tls = options.tls;
  let current = isFiles(tls) ? await readCertificateFiles(tls) : { cert: tls.cert, key: tls.key };
  const certificates = new ReplaySubject<ServingCertificate>(1);
  certificates.next(current);
  const sockets = new Set<Socket>();
  const server: Server = createServer({ cert: current.cert, key: current.key }, (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'https://webhook').pathname;
    // Only the served paths are labels: a scan of made-up paths must not grow the metrics without bound.
    const served = Object.hasOwn(options.webhooks, path);
    const done = served ? s.metrics.started(path) : () => {};
    const send = (answer: Answer): void => {
      done();
      if (served) s.metrics.answered(path, answer.status);
      if (res.headersSent || res.destroyed) return;
      res.writeHead(answer.status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    };
    serve(s, options.webhooks, req).then(send, (error: unknown) => {
      const status = error instanceof PayloadTooLarge ? 413 : error instanceof MalformedReviewError ? 400 : 500;
      const message = error instanceof Error ? error.message : String(error);
      logger.warn({ webhook: path, status, message }, 'webhook server: refused a request');
      send({ status, body: { message } });
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('tlsClientError', (error) => logger.debug({ err: error }, 'webhook server: TLS handshake failed'));

  let reloading = Promise.resolve();
  const reloadCertificates = (): Promise<void> => (reloading = reloading.then(reloadNow));
  const reloadNow = async (): Promise<void> => {
    if (!isFiles(tls)) return;
    let next: ServingCertificate;
    try {
      next = await readCertificateFiles(tls);
      if (next.cert === current.cert && next.key === current.key) return;
      checkPair(next);
    } catch (error) {
      // A pair caught halfway through its rotation: keep serving the old one; the next change brings the rest.
      logger.warn({ err: error, certDir: tls.certDir }, 'webhook server: the certificate files do not load; serving the previous certificate');
      return;
    }
    server.setSecureContext({ cert: next.cert, key: next.key });
    current = next;
    logger.info({ certDir: tls.certDir }, 'webhook server: certificate reloaded');
    certificates.next(next);
  };
  const trigger = options.reload ?? (isFiles(tls) ? directoryChanges(tls.certDir) : undefined);
  const reloads = trigger?.subscribe({
    next: () => void reloadCertificates(),
    error: (error: unknown) => logger.error({ err: error }, 'webhook server: watching the certificate files failed; certificates are no longer reloaded'),
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 9443, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  }).catch((error: unknown) => {
    reloads?.unsubscribe();
    throw error;
  });
  const port = (server.address() as AddressInfo).port;
  const host = options.host === undefined || options.host === '0.0.0.0' || options.host === '::' ? 'localhost' : options.host.includes(':') ? `[${options.host}]` : options.host;
  let closing: Promise<void> | undefined;
  return {
    url: `https://${host}:${port}`,
    port,
    registry,
    certificates: certificates.asObservable(),
    reloadCertificates,
    close() {
      closing ??= new Promise<void>((resolve) => {
        reloads?.unsubscribe();
        certificates.complete();
        for (const controller of s.inFlight) controller.abort(new Error('the webhook server is closing'));
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
  };
}
