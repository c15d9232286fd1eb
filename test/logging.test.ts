import { expect } from 'chai';
import { KubeConfig } from '@kubernetes/client-node';
import { of } from 'rxjs';
import { controller, reconcileByKey, type Logger } from 'rxkube';
import { testScheduler } from './support/objects.js';

interface Entry {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields: Record<string, unknown>;
}

/** A logger that keeps every entry. */
function capture(): Logger & { entries: Entry[] } {
  const entries: Entry[] = [];
  const at = (level: Entry['level']) => (fields: Record<string, unknown> | string, message?: string) =>
    entries.push(typeof fields === 'string' ? { level, message: fields, fields: {} } : { level, message: message ?? '', fields });
  return { entries, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

describe('what rxkube logs for a person to read', () => {
  it('logs a retried failure at warn with its message and attempt, the stack only on the first failure of a run and at debug after', () => {
    const logger = capture();
    testScheduler().run(({ cold, expectObservable }) => {
      const failing = () => {
        throw new Error('the deployment is not there yet');
      };
      const out = cold('a').pipe(reconcileByKey(failing, { logger, maxRetries: 2 }));
      expectObservable(out).toBe('a 4ms b 9ms c', {
        a: { key: 'a', result: 'error', attempt: 0, duration: 0, error: new Error('the deployment is not there yet') },
        b: { key: 'a', result: 'error', attempt: 1, duration: 0, error: new Error('the deployment is not there yet') },
        c: { key: 'a', result: 'dropped', attempt: 2, duration: 0, error: new Error('the deployment is not there yet') },
      });
    });
    const retries = logger.entries.filter((e) => e.message === 'reconcile failed; will retry');
    expect(retries.map((e) => [e.level, e.fields.key, e.fields.attempt, e.fields.err])).to.deep.equal([
      ['warn', 'a', 0, 'the deployment is not there yet'],
      ['warn', 'a', 1, 'the deployment is not there yet'],
    ]);
    expect(retries[0]?.fields.stack).to.match(/^Error: the deployment is not there yet\n\s+at /);
    expect(retries[1]?.fields).not.to.have.property('stack');
    const stacks = logger.entries.filter((e) => e.message === 'reconcile failed: the stack');
    expect(stacks.map((e) => [e.level, e.fields.attempt])).to.deep.equal([['debug', 1]]);
    expect(logger.entries.filter((e) => e.level === 'error').map((e) => e.message)).to.deep.equal(['reconcile failed after 2 retries; dropping the key']);
  });

  it('logs a failure that is not an Error by its text, without a stack', () => {
    const viaThrow = capture();
    testScheduler().run(({ cold, expectObservable }) => {
      const out = cold('a').pipe(
        reconcileByKey(
          () => {
            throw 'no';
          },
          { logger: viaThrow, maxRetries: 1 },
        ),
      );
      expectObservable(out).toBe('a 4ms b', {
        // A throw of something that is not an Error is a panic (as a recovered one is in Go), and still an error.
        a: { key: 'a', result: 'error', attempt: 0, duration: 0, error: 'no', failure: 'panic' },
        b: { key: 'a', result: 'dropped', attempt: 1, duration: 0, error: 'no', failure: 'panic' },
      });
    });
    expect(viaThrow.entries[0]).to.deep.include({ level: 'warn', message: 'reconcile failed; will retry' });
    expect(viaThrow.entries[0]?.fields).to.deep.include({ err: 'no', attempt: 0 });
    expect(viaThrow.entries[0]?.fields).not.to.have.property('stack');
  });

  it('says at start-up which caches it waits for, and only says it reconciles once they have synced', () => {
    const logger = capture();
    const unreachable = new KubeConfig();
    // A port nothing listens on: the list fails and is retried, so the caches never sync.
    unreachable.loadFromOptions({
      clusters: [{ name: 'c', server: 'http://127.0.0.1:9', skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const subscription = controller({
      name: 'waits',
      kubeConfig: unreachable,
      logger,
      for: { version: 'v1', resource: 'configmaps', kind: 'ConfigMap' },
      owns: [{ version: 'v1', resource: 'secrets', kind: 'Secret' }],
      reconcile: () => of(undefined),
    }).subscribe();
    try {
      const infos = logger.entries.filter((e) => e.level === 'info').map((e) => e.message);
      expect(infos).to.include('waiting for the caches of configmaps, secrets to sync before reconciling');
      expect(infos).not.to.include('caches synced: reconciling');
      expect(infos).not.to.include('reconciling');
    } finally {
      subscription.unsubscribe();
    }
  });
});
