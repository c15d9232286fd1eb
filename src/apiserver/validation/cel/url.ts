/**
 * URLs as Go's `url.ParseRequestURI` reads them, which is what kube's CEL
 * `url()` and `isURL()` accept: an absolute URI (`scheme://host/path`) or
 * an absolute path, with the parts its `getHost()`, `getPort()` and
 * friends return.
 */

export interface ParsedUrl {
  scheme: string;
  host: string;
  hostname: string;
  port: string;
  escapedPath: string;
  query: Record<string, string[]>;
}

const uriPattern = /^(?:([a-zA-Z][a-zA-Z0-9+.-]*):)?(?:\/\/([^/?#]*))?([^?#]*)(?:\?([^#]*))?$/;

function decode(text: string): string | undefined {
  try {
    return decodeURIComponent(text.replaceAll('+', ' '));
  } catch {
    return undefined;
  }
}

export function parseUrl(text: string): ParsedUrl | undefined {
  if (text === '' || /[\x00-\x1f\x7f ]/.test(text)) return undefined;
  const m = uriPattern.exec(text);
  if (m === null) return undefined;
  const scheme = m[1] ?? '';
  const authority = m[2];
  const path = m[3] ?? '';
  if (scheme === '' && !text.startsWith('/')) return undefined;
  if (scheme !== '' && authority === undefined && !path.startsWith('/')) return undefined;
  const host = authority === undefined ? '' : authority.slice(authority.lastIndexOf('@') + 1);
  let hostname = host;
  let port = '';
  const bracketed = /^\[([^\]]*)\](?::(\d*))?$/.exec(host);
  if (bracketed !== null) {
    hostname = bracketed[1] as string;
    port = bracketed[2] ?? '';
  } else if (host.includes(':')) {
    const colon = host.lastIndexOf(':');
    hostname = host.slice(0, colon);
    port = host.slice(colon + 1);
    if (!/^\d*$/.test(port) || hostname.includes(':')) return undefined;
  }
  const query: Record<string, string[]> = {};
  for (const pair of (m[4] ?? '').split('&')) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    const key = decode(eq === -1 ? pair : pair.slice(0, eq));
    const value = decode(eq === -1 ? '' : pair.slice(eq + 1));
    if (key === undefined || value === undefined) continue;
    (query[key] ??= []).push(value);
  }
  return { scheme, host, hostname, port, escapedPath: path, query };
}
