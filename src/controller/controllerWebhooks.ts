import { watch } from 'node:fs';
import type { Registry } from 'prom-client';
import type { Logger } from '../logger.js';
import type { KubeObject } from '../types.js';
import { mutatingWebhook, validatingWebhook, type MutateHandler, type ValidateHandler } from '../sinks/webhooks/admission.js';
import type { CertificateFiles, ServingCertificate } from '../sinks/webhooks/certificates.js';
import { conversionWebhook, type ConversionDefinition } from '../sinks/webhooks/conversion.js';
import { startWebhookServer, type WebhookHandler, type WebhookServer } from '../sinks/webhooks/webhookServer.js';
import { webhookPaths } from '../sinks/webhooks/webhookPaths.js';

/**
 * The webhooks of a controller's primary kind, served by `runController`
 * beside its health server, at the paths kubebuilder gives them
 * (`/validate-<group>-<version>-<kind>`, `/mutate-…`, `/convert`), so
 * manifests written for controller-runtime fit. With certificates from a
 * directory that does not hold them yet (cert-manager has not written the
 * Secret), the server starts once they appear, and `/readyz` reports
 * `webhooks` failed until then.
 */

export interface ControllerWebhooks<T extends KubeObject> {
  /** The serving certificate: a directory (the server waits for its files and reloads them on change) or a certificate in memory. */
  tls: CertificateFiles | ServingCertificate;
  /** Default 9443; 0 for any free port. */
  port?: number;
  /** The address to listen on (default: every interface). */
  host?: string;
  /** Serves `/validate-<group>-<version>-<kind>`: allows or denies each write of the primary kind. */
  validate?: ValidateHandler<T>;
  /** Serves `/mutate-<group>-<version>-<kind>`: fills in defaults, sent back to kube as a patch. */
  default?: MutateHandler<T>;
  /** The hub and spokes of the primary kind's versions. */
  convert?: Omit<ConversionDefinition, 'group' | 'kind'>;
}

function endpoints<T extends KubeObject>(resource: { group?: string; version: string; kind: string }, hooks: ControllerWebhooks<T>): Record<string, WebhookHandler> {
  const paths = webhookPaths(resource);
  const out: Record<string, WebhookHandler> = {};
  if (hooks.validate !== undefined) out[paths.validate] = validatingWebhook(hooks.validate);
  if (hooks.default !== undefined) out[paths.default] = mutatingWebhook(hooks.default);
  if (hooks.convert !== undefined) out[paths.convert] = conversionWebhook([{ ...hooks.convert, group: resource.group ?? '', kind: resource.kind }]);
  return out;
}

function isMissingFile(error: unknown): boolean {
  return (error as { cause?: { code?: string } })?.cause?.code === 'ENOENT';
}

/** Starts the webhook server as soon as its certificate can be read; rejects on any other failure, or when `signal` aborts first. */
export function serveControllerWebhooks<T extends KubeObject>(
  resource: { group?: string; version: string; kind: string },
  hooks: ControllerWebhooks<T>,
  options: { registry: Registry; logger: Logger; signal: AbortSignal },
): Promise<WebhookServer> {
  const start = (): Promise<WebhookServer> =>
    startWebhookServer({ tls: hooks.tls, webhooks: endpoints(resource, hooks), registry: options.registry, logger: options.logger, ...(hooks.port !== undefined ? { port: hooks.port } : {}), ...(hooks.host !== undefined ? { host: hooks.host } : {}) });
  return new Promise((resolve, reject) => {
    let watcher: ReturnType<typeof watch> | undefined;
    let attempt: Promise<void> | undefined;
    const finish = (): void => {
      watcher?.close();
      options.signal.removeEventListener('abort', onAbort);
    };
    const onAbort = (): void => {
      finish();
      reject(new Error('the controller stopped before its webhook certificate appeared'));
    };
    const tryStart = (): void => {
      attempt ??= start().then(
        (server) => {
          finish();
          if (options.signal.aborted) void server.close();
          else resolve(server);
        },
        (error: unknown) => {
          attempt = undefined;
          // Stopped while this attempt read the files: watching now would outlive the controller.
          if (options.signal.aborted) return;
          if (isMissingFile(error) && 'certDir' in hooks.tls) {
            options.logger.info({ certDir: hooks.tls.certDir }, 'webhooks: waiting for the serving certificate');
            watcher ??= watch(hooks.tls.certDir, tryStart);
            return;
          }
          finish();
          reject(error as Error);
        },
      );
    };
    options.signal.addEventListener('abort', onAbort, { once: true });
    tryStart();
  });
}
