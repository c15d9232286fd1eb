import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The names every live view answers to, as `kubectl proxy`'s default `--accept-hosts` (`^localhost$,^127\.0\.0\.1$,^\[::1\]$`). */
export const loopbackHosts: readonly string[] = Object.freeze(['localhost', '127.0.0.1', '[::1]']);

/** The shortest token the live view takes: a guessable one would be no lock. */
export const minTokenLength = 16;

/**
 * The host a `Host` header names, without its port, lower-cased: `[::1]`
 * (brackets kept, so it reads as it is written in a URL), `localhost`,
 * `10.0.0.5`; '' when there is none.
 */
export function hostOf(header: string | undefined): string {
  const value = (header ?? '').trim().toLowerCase();
  if (value.startsWith('[')) {
    const end = value.indexOf(']');
    return end < 0 ? value : value.slice(0, end + 1);
  }
  const colon = value.lastIndexOf(':');
  return colon < 0 ? value : value.slice(0, colon);
}

/** Whether `host` (as `hostOf` gives it) is one of `names` or matches one of `patterns`. */
export function hostAccepted(host: string, names: ReadonlySet<string>, patterns: readonly RegExp[]): boolean {
  return host !== '' && (names.has(host) || patterns.some((pattern) => pattern.test(host)));
}

const digest = (value: string): Buffer => createHash('sha256').update(value).digest();
/** Equal or not, in a time that does not depend on where they differ (both sides hashed first, so their lengths are equal too). */
const same = (offered: string, expected: Buffer): boolean => timingSafeEqual(digest(offered), expected);

function cookies(header: string | undefined): Map<string, string> {
  const found = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0) found.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return found;
}

/** What a request gets from a token check: go on, or an answer already sent. */
export type TokenCheck = 'pass' | 'answered';

/**
 * The live view's bearer token, checked on every request: in an
 * `Authorization: Bearer` header (scripts, curl), in the session cookie
 * the view sets (the page: a browser's `EventSource` cannot send headers,
 * but sends the cookie), or once in the address, `?token=`, which sets
 * that cookie and redirects to the same address without the token, so it
 * stays out of the history, the address bar and the `Referer`. The cookie
 * holds a value derived from the token (an HMAC), not the token itself;
 * it is `HttpOnly` (the page's script never reads it) and
 * `SameSite=Strict` (no other site's page sends it). Without a valid
 * token: 401, with `WWW-Authenticate: Bearer`.
 */
export function tokenGuard(token: string, path: string): (req: IncomingMessage, res: ServerResponse, url: URL) => TokenCheck {
  const expected = digest(token);
  const session = createHmac('sha256', token).update('rxkube live view session').digest('hex');
  const expectedSession = digest(session);
  return (req, res, url) => {
    // Cookies are shared by every port of a host: the name carries the port, so two live views on one host keep theirs apart.
    const cookieName = `rxkube-live-view-${req.socket.localPort ?? 0}`;
    const offered = url.searchParams.get('token');
    if (offered !== null && same(offered, expected)) {
      url.searchParams.delete('token');
      res.writeHead(303, { Location: `${url.pathname}${url.search}`, 'Set-Cookie': `${cookieName}=${session}; Path=${path}; HttpOnly; SameSite=Strict`, 'Cache-Control': 'no-store' });
      res.end();
      return 'answered';
    }
    const bearer = /^bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1];
    if (offered === null && ((bearer !== undefined && same(bearer, expected)) || same(cookies(req.headers.cookie).get(cookieName) ?? '', expectedSession))) return 'pass';
    res.writeHead(401, { 'Content-Type': 'text/plain; charset=utf-8', 'WWW-Authenticate': 'Bearer realm="rxkube live view"', 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' });
    res.end(
      req.method === 'HEAD'
        ? undefined
        : `401 Unauthorized: ${offered !== null ? 'the token in the address is not the live view\'s' : 'the live view needs its token'}: open ${path}/?token=<token> once in the browser, or send Authorization: Bearer <token>\n`,
    );
    return 'answered';
  };
}
