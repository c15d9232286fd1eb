import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mergeMap, Subject, type Observable } from 'rxjs';
import type { ControllerOptions } from 'rxkube';
import type { Application } from './types.js';

/** A repository URL as the push notifications and the Applications may spell it: no trailing `/` or `.git`. */
export function sameRepository(url: string): string {
  return url.trim().replace(/\/+$/, '').replace(/\.git$/, '');
}

/**
 * The trigger of push notifications: each repository URL `pushes` emits
 * triggers the Applications that follow it (read from the controller's
 * store), so that a commit is synced at once instead of at the next poll.
 * Polling stays the fallback for a notification that never came.
 */
export function pushTrigger(pushes: Observable<string>): NonNullable<ControllerOptions<Application>['triggers']>[number] {
  return {
    name: 'git-push',
    keys: ({ store }) => pushes.pipe(mergeMap((url) => store.list().filter((app) => sameRepository(app.spec.repoURL) === sameRepository(url)))),
  };
}

/** The repository URLs of a push payload: GitHub's and Gitea's (`repository.clone_url`, `html_url`, `ssh_url`), GitLab's (`repository.git_http_url`, `git_ssh_url`). */
function repositoryUrls(payload: unknown): string[] {
  const repository = (payload as { repository?: Record<string, unknown> } | null)?.repository;
  if (repository === null || typeof repository !== 'object') return [];
  return ['clone_url', 'html_url', 'ssh_url', 'git_http_url', 'git_ssh_url', 'url']
    .map((field) => repository[field])
    .filter((url): url is string => typeof url === 'string' && url !== '');
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) reject(new Error(`the body is larger than ${limit} bytes`));
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** Whether the request carries the shared secret: GitHub's and Gitea's HMAC-SHA256 signature of the body, or GitLab's token. */
function authentic(req: IncomingMessage, body: Buffer, secret: string): boolean {
  const signature = req.headers['x-hub-signature-256'];
  if (typeof signature === 'string') {
    const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
    const given = Buffer.from(signature);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }
  const token = req.headers['x-gitlab-token'];
  return typeof token === 'string' && token.length === secret.length && timingSafeEqual(Buffer.from(token), Buffer.from(secret));
}

/** A push endpoint that is listening. */
export interface PushEndpoint {
  /** Where Git providers send their push webhooks (`POST`). */
  readonly url: string;
  /** The repository URLs pushed to, for `pushTrigger`. */
  readonly pushes: Observable<string>;
  close(): Promise<void>;
}

/**
 * Serves push webhooks of Git providers (GitHub, GitLab, Gitea) on
 * `POST /`: a JSON payload naming its repository, authenticated by
 * `secret` (the provider's webhook secret; without one, every request is
 * believed). Answers 202 for a push taken, 401 for a wrong or missing
 * signature, 400 for a body that is no JSON or names no repository, 405
 * for another method. Binds loopback unless given `host`.
 */
export async function servePushEndpoint(options: { port?: number; host?: string; secret?: string } = {}): Promise<PushEndpoint> {
  const pushes = new Subject<string>();
  const server: Server = createServer((req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end('only POST\n');
    readBody(req, 1 << 20).then(
      (body) => {
        if (options.secret !== undefined && !authentic(req, body, options.secret)) return void res.writeHead(401).end('the signature does not match the secret\n');
        let payload: unknown;
        try {
          payload = JSON.parse(body.toString('utf8'));
        } catch (err) {
          return void res.writeHead(400).end(`the body is no JSON: ${(err as Error).message}\n`);
        }
        const urls = repositoryUrls(payload);
        if (urls.length === 0) return void res.writeHead(400).end('the payload names no repository (repository.clone_url, html_url, git_http_url, ...)\n');
        res.writeHead(202).end('accepted\n');
        for (const url of new Set(urls.map(sameRepository))) pushes.next(url);
      },
      (err: Error) => void res.writeHead(413).end(`${err.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', resolve);
  });
  const { port, address } = server.address() as AddressInfo;
  return {
    url: `http://${address.includes(':') ? `[${address}]` : address}:${port}/`,
    pushes: pushes.asObservable(),
    close: () =>
      new Promise<void>((resolve) => {
        pushes.complete();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
