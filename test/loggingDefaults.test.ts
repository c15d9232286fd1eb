import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);
const child = new URL('./fixtures/defaultLoggersChild.ts', import.meta.url).pathname;

interface Line {
  level: number;
  lib: string;
  part: string;
  msg: string;
  stack?: string;
}

describe('the default logger of every part that retries or gives up: pino JSON lines on stderr', function () {
  this.timeout(60_000);
  let lines: Line[];
  before(async () => {
    // A process of its own: the default writes to file descriptor 2, which only the parent can read whole.
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.RXKUBE_LOG_LEVEL; // the default level, info
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', child], { env, timeout: 50_000 });
    expect(stdout.trim()).to.equal('done');
    lines = stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Line);
  });
  const WARN = 40;
  const ERROR = 50;
  const logged = (part: string, level: number, message: RegExp) => lines.filter((l) => l.lib === 'rxkube' && l.part === part && l.level === level && message.test(l.msg));

  it('listWatch: a failed list, retried after a pause, at warn', () => {
    expect(logged('listWatch', WARN, /^list failed; retrying after a pause$/)).to.have.length(1);
  });
  it('deltas: an object that cannot be keyed, skipped, at error', () => {
    expect(logged('deltas', ERROR, /^skipping an object that cannot be keyed$/)).to.have.length(1);
  });
  it('reconcileByKey: a retried run at warn with its first stack, the key given up at error', () => {
    const [retry] = logged('reconcileByKey', WARN, /^reconcile failed; will retry$/);
    expect(retry?.stack).to.match(/^Error: the deployment is not there yet \(run 1\)\n\s+at /);
    expect(logged('reconcileByKey', ERROR, /^reconcile failed after 1 retries; dropping the key$/)).to.have.length(1);
  });
  it('kubeClient: a request the server asked to retry later, at warn', () => {
    expect(logged('kubeClient', WARN, /^server asked to retry later$/)).to.have.length(1);
  });
  it('eventRecorder: an Event given up after its last attempt, at error', () => {
    expect(logged('eventRecorder', ERROR, /^event not recorded/)).to.have.length(1);
  });
  it('leaderElection: a failed try of the Lease at warn, leading at info', () => {
    expect(logged('leaderElection', WARN, /^lease try failed$/)).to.have.length(1);
    expect(logged('leaderElection', 30, /^acquired the lease: leading$/)).to.have.length(1);
  });
  it('startHealthServer: a failing check, at warn', () => {
    expect(logged('healthServer', WARN, /^health check failed$/)).to.have.length(1);
  });
  it('startWebhookServer: a request that is not a review, refused at warn', () => {
    expect(logged('webhookServer', WARN, /^webhook server: refused a request$/)).to.have.length(1);
  });
});
