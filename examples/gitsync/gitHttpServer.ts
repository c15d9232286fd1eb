import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Serves the repositories under `root` over Git's smart HTTP protocol,
 * through `git http-backend` as a CGI program: a real Git server for the
 * gitsync tests of repositories named by URL. Needs the `git` binary
 * (the controller itself does not). `git` names the binary (default: `git`
 * on PATH). A backend that cannot be started answers 500 with why, and
 * the server goes on serving.
 */
export async function serveGitOverHttp(root: string, options: { git?: string } = {}): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const cgi = spawn(options.git ?? 'git', ['http-backend'], {
      env: {
        GIT_PROJECT_ROOT: root,
        GIT_HTTP_EXPORT_ALL: '1',
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        REQUEST_METHOD: req.method ?? 'GET',
        CONTENT_TYPE: req.headers['content-type'] ?? '',
        PATH: process.env.PATH ?? '',
      },
    });
    // A backend that never started or exited before reading the whole body: what it answers (or the
    // spawn error) is the response, the unread rest of the request is of no use.
    cgi.stdin.on('error', () => undefined);
    req.pipe(cgi.stdin);
    const chunks: Buffer[] = [];
    cgi.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    // A failed spawn emits `error` and then `close`: only the first may answer.
    let failed = false;
    cgi.on('error', (err) => {
      failed = true;
      if (!res.headersSent) res.writeHead(500).end(`git http-backend: ${err.message}`);
    });
    cgi.on('close', () => {
      if (failed || res.headersSent) return;
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, end).toString('latin1').split('\r\n');
      let status = 200;
      const headers: Record<string, string> = {};
      for (const line of head) {
        const [name, ...rest] = line.split(':');
        const value = rest.join(':').trim();
        if (name?.toLowerCase() === 'status') status = Number.parseInt(value, 10);
        else if (name) headers[name] = value;
      }
      res.writeHead(status, headers).end(all.subarray(end + 4));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // A client's kept-alive connections would hold the close back until they time out.
        server.closeAllConnections();
      }),
  };
}
