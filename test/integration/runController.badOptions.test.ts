import { expect } from 'chai';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runController, silentLogger, type ControllerOptions, type KubeObject } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';

const configmaps = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespace: 'default' };

/** How many listeners runController added to the signal and left on it. */
function countListeners(signal: AbortSignal): () => number {
  const attached = new Set<unknown>();
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = (...args: Parameters<AbortSignal['addEventListener']>) => {
    attached.add(args[1]);
    add(...args);
  };
  signal.removeEventListener = (...args: Parameters<AbortSignal['removeEventListener']>) => {
    attached.delete(args[1]);
    remove(...args);
  };
  return () => attached.size;
}

// What keeps the process alive: servers, watchers, sockets (not the timers and file reads in flight of the test's own setup).
const handles = (): string[] => process.getActiveResourcesInfo().filter((name) => !['Timeout', 'Immediate', 'FSReqCallback', 'FSReqPromise'].includes(name)).sort();
/** The kinds of handle there are more of now than in `before`: what was opened and left open (one that closed meanwhile, a connect of another test under way, is no leak). */
const added = (before: string[]): string[] => {
  const left = [...before];
  return handles().filter((name) => {
    const i = left.indexOf(name);
    if (i === -1) return true;
    left.splice(i, 1);
    return false;
  });
};

/** A failed start of runController leaves nothing behind: no listener, no server, no file. */
describe('runController given options it cannot start with', function () {
  this.timeout(30_000);
  let server: ApiServer;
  let dir: string;
  let taken: Server | undefined;

  beforeEach(async () => {
    server = await startApiServer({ logger: silentLogger });
    dir = await mkdtemp(join(tmpdir(), 'rxkube-run-bad-'));
  });
  afterEach(async () => {
    await new Promise((resolve) => (taken ? taken.close(resolve) : resolve(undefined)));
    taken = undefined;
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  const options = (): ControllerOptions<KubeObject> & { kubeConfig: ReturnType<ApiServer['kubeConfig']> } => ({
    name: 'bad',
    kubeConfig: server.kubeConfig(),
    for: configmaps,
    reconcile: () => undefined,
    logger: silentLogger,
  });

  it('rejects a bad live-view option, naming it, before it adds a listener to the caller\'s signals, starts the webhooks or opens the recording', async () => {
    const signal = new AbortController().signal;
    const stopNow = new AbortController().signal;
    const onSignal = countListeners(signal);
    const onStopNow = countListeners(stopNow);
    const before = handles();
    const sigterm = process.listenerCount('SIGTERM');
    const error = await runController({
      ...options(),
      signal,
      stopNow,
      health: { port: 0, host: '127.0.0.1' },
      liveView: { batchInterval: 0 },
      record: join(dir, 'run.jsonl'),
      webhooks: { tls: { certDir: dir }, port: 0, host: '127.0.0.1', validate: () => ({ allowed: true }) },
    }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).to.be.instanceOf(RangeError);
    expect((error as Error).message).to.equal('live view: batchInterval must be a positive number of ms, got 0');
    expect([onSignal(), onStopNow()]).to.deep.equal([0, 0]);
    expect(process.listenerCount('SIGTERM')).to.equal(sigterm);
    await new Promise((resolve) => setImmediate(resolve));
    expect(added(before)).to.deep.equal([]);
    expect(await readdir(dir)).to.deep.equal([]);
  });

  it('when the health server cannot listen, stops the webhook server, the live view and the recording it started, and removes its listeners', async () => {
    taken = createServer();
    await new Promise<void>((resolve) => (taken as Server).listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    const signal = new AbortController().signal;
    const onSignal = countListeners(signal);
    const before = handles();
    const error = await runController({
      ...options(),
      signal,
      health: { port, host: '127.0.0.1' },
      liveView: { port: 0 },
      record: join(dir, 'run.jsonl'),
      webhooks: { tls: { certDir: dir }, port: 0, host: '127.0.0.1', validate: () => ({ allowed: true }) },
    }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect((error as Error).message).to.match(new RegExp(`^health server cannot listen on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`));
    expect(onSignal()).to.equal(0);
    await new Promise((resolve) => setImmediate(resolve));
    expect(added(before)).to.deep.equal([]);
  });
});
