import { expect } from 'chai';
import { TestScheduler } from 'rxjs/testing';
import { silentLogger, type ListWatchOptions, ListWatchError, type KubeObject, type ListWatchEvent } from 'rxkube';
import { Reflector, type Phase, type TerminalPhase } from '../../src/sources/listWatchPhases.js';
import type { ListBodyHandler } from '../../src/sources/listBodyParser.js';
import type { ListPage, ListWatchTransport, PageAnswer, WatchEnd } from '../../src/sources/listWatchTransport.js';
import { MalformedWatchLineError, type WatchLine } from '../../src/sources/watchLineReader.js';
import { obj } from '../support/objects.js';
import { SourceShard, resolveShard } from '../../src/sources/sourceShard.js';
import { fnv1a64 } from '../../src/util/shardHash.js';

/**
 * The list-watch phases without HTTP: each step is given a scripted answer
 * (a page, or the lines of a watch and how it ended) and must name the phase
 * that follows, call the hooks and emit the events. Waits run in virtual time.
 */

/** A page answer as scripted: an `ok` page carries its items, which the transport hands over one by one. */
type ScriptedPage = Exclude<PageAnswer, { kind: 'ok' }> | { kind: 'ok'; page: ListPage; items: unknown[] };

/** What a transport does with a scripted page: each item to the handler (which may stop it), then the answer. */
function answerPage(answer: ScriptedPage | undefined, handler: ListBodyHandler): PageAnswer {
  if (answer === undefined) return { kind: 'aborted' };
  if (answer.kind !== 'ok') return answer;
  for (const item of answer.items) if (handler.item(item, answer.page)) return { kind: 'stopped' };
  return { kind: 'ok', page: answer.page };
}

type ScriptedWatch = { lines?: readonly (WatchLine | MalformedWatchLineError)[]; end: WatchEnd };

function phases(options: ListWatchOptions<KubeObject> = {}, shard?: SourceShard) {
  const scheduler = new TestScheduler((a, b) => {
    expect(a).to.deep.equal(b);
  });
  // Outside run(), a TestScheduler stops at 750 frames; backoffs wait longer.
  scheduler.maxFrames = Infinity;
  const stop = new AbortController();
  const events: ListWatchEvent[] = [];
  const hooks: string[] = [];
  const requests: string[] = [];
  const pages: ScriptedPage[] = [];
  const watches: ScriptedWatch[] = [];
  const transport: ListWatchTransport = {
    listPage: (query, handler) => {
      requests.push(`list ${query}`);
      return Promise.resolve(answerPage(pages.shift(), handler));
    },
    watch: (query, handler) => {
      requests.push(`watch ${query}`);
      const watch = watches.shift() ?? { end: { kind: 'aborted' } };
      for (const line of watch.lines ?? []) {
        const end = line instanceof MalformedWatchLineError ? handler.malformed(line) : handler.line(line);
        if (end !== undefined) return Promise.resolve(end);
      }
      return Promise.resolve(watch.end);
    },
  };
  const reflector = new Reflector<KubeObject>(
    { version: 'v1', resource: 'configmaps', namespace: 'default' },
    {
      scheduler,
      logger: silentLogger,
      random: () => 0,
      monitor: {
        relist: (_r, reason) => hooks.push(`relist ${reason}`),
        watchRestart: (_r, reason) => hooks.push(`watchRestart ${reason}`),
        malformedLine: () => hooks.push('malformedLine'),
        retry: (info) => hooks.push(`retry ${info.verb} ${info.delayMs} ${info.reason}${info.code !== undefined ? ` ${info.code}` : ''}`),
      },
      ...options,
    },
    (event) => events.push(event),
    stop.signal,
    () => transport,
    shard,
  );
  /** One step, with the scheduler flushed until it has resolved. */
  const step = async (phase: Exclude<Phase, TerminalPhase>): Promise<Phase> => settle(reflector.step(phase), scheduler);
  return { reflector, scheduler, stop, events, hooks, requests, pages, watches, step };
}

async function settle<T>(promise: Promise<T>, scheduler: TestScheduler): Promise<T> {
  let done = false;
  void promise.finally(() => (done = true));
  for (let i = 0; i < 100 && !done; i++) {
    await Promise.resolve();
    scheduler.flush();
  }
  return promise;
}

const event = (type: string, object: unknown): WatchLine => ({ type, object });
const bookmark = (rv: string, annotations?: Record<string, string>): WatchLine => event('BOOKMARK', { metadata: { resourceVersion: rv, annotations } });
const page = (items: unknown[], metadata: Record<string, string>): ScriptedPage => ({ kind: 'ok', page: { kind: 'ConfigMapList', apiVersion: 'v1', metadata }, items });
const status = (code: number, retryAfterSeconds?: number) => ({ code, reason: `R${code}`, message: `m${code}`, retryAfterSeconds });

describe('listWatch phases', () => {
  describe('what follows a watch', () => {
    it('reopens a cleanly closed watch at once, from the last resourceVersion seen', async () => {
      const p = phases();
      p.watches.push({ lines: [event('MODIFIED', obj('a', '7')), bookmark('9')], end: { kind: 'closed' } });
      expect(await p.step({ kind: 'watch', resourceVersion: '5' })).to.deep.equal({ kind: 'watch', resourceVersion: '9' });
      expect(p.requests).to.deep.equal(['watch watch=1&allowWatchBookmarks=true&timeoutSeconds=300&resourceVersion=5']);
      expect(p.events).to.deep.equal([{ type: 'Modified', object: obj('a', '7') }, { type: 'Bookmark', resourceVersion: '9' }]);
      expect(p.hooks).to.deep.equal(['watchRestart closed']);
    });

    const gone: [string, ScriptedWatch][] = [
      ['an ERROR event', { lines: [event('ERROR', { code: 410, message: 'too old' })], end: { kind: 'closed' } }],
      ['an HTTP status', { end: { kind: 'failed', failure: { ...status(410, 5), message: 'too old' } } }],
    ];
    for (const [form, watch] of gone) {
      it(`lists again after a 410 sent as ${form}, through the backoff`, async () => {
        const p = phases();
        p.watches.push(watch);
        expect(await p.step({ kind: 'watch', resourceVersion: '5' })).to.deep.equal({
          kind: 'backoff',
          verb: 'watch',
          reason: 'expired',
          code: 410,
          next: { kind: 'list', reason: 'expired' },
        });
        expect(p.hooks).to.deep.equal(['watchRestart expired']);
      });
    }

    it('backs off a 5xx or a 429 with its Retry-After, then reopens from where it was', async () => {
      const p = phases();
      p.watches.push({ lines: [event('ADDED', obj('a', '6'))], end: { kind: 'failed', failure: status(429, 3) } });
      p.watches.push({ lines: [event('ERROR', { code: 500, reason: 'InternalError', message: 'etcd' })], end: { kind: 'closed' } });
      expect(await p.step({ kind: 'watch', resourceVersion: '5' })).to.deep.equal({
        kind: 'backoff',
        verb: 'watch',
        reason: '429 R429: m429',
        code: 429,
        retryAfterSeconds: 3,
        next: { kind: 'watch', resourceVersion: '6' },
      });
      expect(await p.step({ kind: 'watch', resourceVersion: '6' })).to.deep.equal({
        kind: 'backoff',
        verb: 'watch',
        reason: '500 InternalError: etcd',
        code: 500,
        retryAfterSeconds: undefined,
        next: { kind: 'watch', resourceVersion: '6' },
      });
      expect(p.hooks).to.deep.equal(['watchRestart throttled', 'watchRestart error']);
    });

    for (const kind of ['idle', 'dropped', 'malformed'] as const) {
      it(`backs off a watch that ended ${kind}, and counts the restart as ${kind}`, async () => {
        const p = phases();
        p.watches.push({ end: { kind } });
        expect(await p.step({ kind: 'watch', resourceVersion: '5' })).to.deep.equal({
          kind: 'backoff',
          verb: 'watch',
          reason: `watch ${kind}`,
          next: { kind: 'watch', resourceVersion: '5' },
        });
        expect(p.hooks).to.deep.equal([`watchRestart ${kind}`]);
      });
    }

    it('reports a malformed line, and takes a bookmark without a version or an unknown type for one, without the hook', async () => {
      const p = phases();
      p.watches.push({ lines: [event('MODIFIED', obj('a', '6')), new MalformedWatchLineError('not JSON', 0, 4)], end: { kind: 'closed' } });
      p.watches.push({ lines: [event('BOOKMARK', { metadata: {} })], end: { kind: 'closed' } });
      p.watches.push({ lines: [event('SNAPSHOT', {})], end: { kind: 'closed' } });
      const next = { kind: 'backoff', verb: 'watch', reason: 'watch malformed', next: { kind: 'watch', resourceVersion: '6' } };
      expect(await p.step({ kind: 'watch', resourceVersion: '5' })).to.deep.equal(next);
      expect(await p.step({ kind: 'watch', resourceVersion: '6' })).to.deep.equal(next);
      expect(await p.step({ kind: 'watch', resourceVersion: '6' })).to.deep.equal(next);
      expect(p.hooks).to.deep.equal(['malformedLine', 'watchRestart malformed', 'watchRestart malformed', 'watchRestart malformed']);
    });

    it('backs off a watch request that could not be sent, without counting a restart', async () => {
      const p = phases();
      p.watches.push({ end: { kind: 'error', reason: 'watch request failed: connect ECONNREFUSED' } });
      expect(await p.step({ kind: 'watch', resourceVersion: '5' })).to.deep.equal({
        kind: 'backoff',
        verb: 'watch',
        reason: 'watch request failed: connect ECONNREFUSED',
        next: { kind: 'watch', resourceVersion: '5' },
      });
      expect(p.hooks).to.deep.equal([]);
    });

    it('lists again after a watch answered 504 "too large resource version", as an HTTP status or an ERROR event', async () => {
      const p = phases();
      p.watches.push({ end: { kind: 'failed', failure: { ...status(504), tooLargeResourceVersion: true } } });
      p.watches.push({ lines: [event('ERROR', { code: 504, message: 'Too large resource version: 90, current: 3' })], end: { kind: 'closed' } });
      const relist = { kind: 'backoff', verb: 'watch', reason: 'too large resource version', code: 504, next: { kind: 'list', reason: 'expired' } };
      expect(await p.step({ kind: 'watch', resourceVersion: '90' })).to.deep.equal(relist);
      expect(await p.step({ kind: 'watch', resourceVersion: '90' })).to.deep.equal(relist);
      expect(p.hooks).to.deep.equal(['watchRestart expired', 'watchRestart expired']);
    });

    it('retries 401 and 403 with the backoff, saying the source fails until an answer comes', async () => {
      const statuses: unknown[] = [];
      const p = phases({ monitor: { status: (_r, st) => statuses.push(st) } });
      for (const code of [403, 401]) {
        p.watches.push({ end: { kind: 'failed', failure: status(code) } });
        const next = await p.step({ kind: 'watch', resourceVersion: '5' });
        expect(next).to.deep.equal({ kind: 'backoff', verb: 'watch', reason: `${code} R${code}: m${code}`, code, retryAfterSeconds: undefined, next: { kind: 'watch', resourceVersion: '5' } });
        expect(await p.step(next as Extract<Phase, { kind: 'backoff' }>)).to.deep.equal({ kind: 'watch', resourceVersion: '5' });
      }
      // Told once when the failing began, not per retry; the delays grew.
      expect(statuses).to.deep.equal([{ healthy: false, verb: 'watch', reason: '403 R403: m403', code: 403 }]);
      expect(p.scheduler.now()).to.equal(800 + 1600);
      p.pages.push(page([], { resourceVersion: '6' }));
      await p.step({ kind: 'list', reason: 'initial' });
      expect(statuses.at(-1)).to.deep.equal({ healthy: true });
    });

    it('fails on a status no retry fixes, naming the verb, the resource and the selector, without counting a restart', async () => {
      const p = phases({ labelSelector: 'app=web' });
      p.watches.push({ end: { kind: 'failed', failure: status(400) } });
      const next = await p.step({ kind: 'watch', resourceVersion: '5' });
      expect(next.kind).to.equal('failed');
      const { error } = next as Extract<Phase, { kind: 'failed' }>;
      expect(error).to.be.instanceOf(ListWatchError);
      expect([error.code, error.verb, error.resource]).to.deep.equal([400, 'watch', 'configmaps']);
      expect(error.message).to.match(/^cannot watch configmaps in namespace "default" with labelSelector "app=web": .*selectors.*\(400 R400: m400\)$/);
      expect(p.hooks).to.deep.equal([]);
    });

    it('fails when the transform throws, naming the transform, the object and the watch, the thrown error as cause', async () => {
      const thrown = new Error('no');
      const p = phases({
        transform: () => {
          throw thrown;
        },
      });
      p.watches.push({ lines: [event('ADDED', obj('a', '6')), event('ADDED', obj('b', '7'))], end: { kind: 'closed' } });
      const next = await p.step({ kind: 'watch', resourceVersion: '5' });
      expect(next.kind).to.equal('failed');
      const { error } = next as Extract<Phase, { kind: 'failed' }>;
      expect([error.message, error.verb, error.cause]).to.deep.equal(['the transform of configmaps threw for default/a: no', 'watch', thrown]);
      expect(p.events).to.deep.equal([]);
    });

    it('stops when the watch was aborted', async () => {
      const p = phases();
      p.watches.push({ end: { kind: 'aborted' } });
      expect(await p.step({ kind: 'watch', resourceVersion: '5' })).to.deep.equal({ kind: 'stopped' });
      expect(p.hooks).to.deep.equal([]);
    });
  });

  describe('a paged list', () => {
    it('begins with Restart, asks for the next page by its token, and ends with Synced and a watch from its version', async () => {
      const p = phases({ pageSize: 2 });
      p.pages.push(page([{ metadata: { name: 'a' } }, null, { metadata: { name: 'b' }, kind: 'Other' }], { continue: 'next', resourceVersion: '3' }));
      p.pages.push(page([{ metadata: { name: 'c' } }], { resourceVersion: '4' }));
      expect(await p.step({ kind: 'list', reason: 'initial' })).to.deep.equal({ kind: 'list', reason: 'initial', continue: 'next' });
      expect(await p.step({ kind: 'list', reason: 'initial', continue: 'next' })).to.deep.equal({ kind: 'watch', resourceVersion: '4' });
      expect(p.requests).to.deep.equal(['list limit=2', 'list limit=2&continue=next']);
      expect(p.hooks).to.deep.equal(['relist initial']);
      expect(p.events).to.deep.equal([
        { type: 'Restart' },
        { type: 'Listed', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } } },
        { type: 'Listed', object: { apiVersion: 'v1', kind: 'Other', metadata: { name: 'b' } } },
        { type: 'Listed', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } } },
        { type: 'Synced', resourceVersion: '4' },
      ]);
    });

    it('lists in one response with pageSize 0', async () => {
      const p = phases({ pageSize: 0, labelSelector: 'app=web' });
      p.pages.push(page([], { resourceVersion: '4' }));
      expect(await p.step({ kind: 'list', reason: 'initial' })).to.deep.equal({ kind: 'watch', resourceVersion: '4' });
      expect(p.requests).to.deep.equal(['list labelSelector=app%3Dweb']);
    });

    it('starts over from the first page when its page token expired (410)', async () => {
      const p = phases();
      p.pages.push({ kind: 'failed', failure: status(410) });
      expect(await p.step({ kind: 'list', reason: 'initial', continue: 'next' })).to.deep.equal({
        kind: 'backoff',
        verb: 'list',
        reason: 'continue-expired',
        next: { kind: 'list', reason: 'continue-expired' },
      });
      expect(p.events).to.deep.equal([]);
    });

    it('retries any other failure from the first page, for the same reason', async () => {
      const p = phases();
      p.pages.push({ kind: 'failed', failure: status(410) });
      p.pages.push({ kind: 'error', reason: 'list sent nothing for 20000 ms' });
      p.pages.push(page([], { continue: '' }));
      const again = { kind: 'list', reason: 'expired' };
      expect(await p.step({ kind: 'list', reason: 'expired' })).to.deep.equal({ kind: 'backoff', verb: 'list', reason: '410 R410: m410', code: 410, retryAfterSeconds: undefined, next: again });
      expect(await p.step({ kind: 'list', reason: 'expired', continue: 'next' })).to.deep.equal({ kind: 'backoff', verb: 'list', reason: 'list sent nothing for 20000 ms', next: again });
      expect(await p.step({ kind: 'list', reason: 'expired' })).to.deep.equal({ kind: 'backoff', verb: 'list', reason: 'list response has no metadata.resourceVersion', next: again });
      expect(p.events.filter((e) => e.type === 'Synced')).to.deep.equal([]);
    });

    it('fails for a kubeconfig without a cluster, and for a throwing transform', async () => {
      const p = phases({
        transform: (o) => {
          if (o.metadata.name === 'b') throw new TypeError('bad');
          return o;
        },
      });
      p.pages.push({ kind: 'misconfigured', message: 'the kubeconfig has no current cluster' });
      p.pages.push(page([{ metadata: { name: 'a' } }, { metadata: { name: 'b', namespace: 'x' } }], { resourceVersion: '4' }));
      const errors = [await p.step({ kind: 'list', reason: 'initial' }), await p.step({ kind: 'list', reason: 'initial' })].map(
        (next) => (next as Extract<Phase, { kind: 'failed' }>).error,
      );
      expect(errors.map((e) => [e.message, e.reason, e.verb])).to.deep.equal([
        ['cannot list configmaps in namespace "default": the kubeconfig has no current cluster', 'BadKubeConfig', 'list'],
        ['the transform of configmaps threw for x/b: bad', 'TransformFailed', 'list'],
      ]);
    });

    it('stops in the middle of a page once unsubscribed, and asks for nothing more', async () => {
      const stop = new AbortController();
      const emitted: string[] = [];
      const asked: string[] = [];
      const answer = page([{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }], { resourceVersion: '3' });
      const reflector = new Reflector<KubeObject>(
        { version: 'v1', resource: 'configmaps' },
        { logger: silentLogger },
        (e) => {
          emitted.push(e.type);
          if (e.type === 'Listed') stop.abort();
        },
        stop.signal,
        () => ({
          listPage: (_query, handler) => (asked.push('list'), Promise.resolve(answerPage(answer, handler))),
          watch: () => (asked.push('watch'), Promise.resolve({ kind: 'aborted' })),
        }),
      );
      expect(await reflector.run()).to.deep.equal({ kind: 'stopped' });
      expect(emitted).to.deep.equal(['Restart', 'Listed']);
      expect(asked).to.deep.equal(['list']);
    });
  });

  describe('a streaming list', () => {
    const end = bookmark('8', { 'k8s.io/initial-events-end': 'true' });

    it('lists the ADDED events up to the initial-events-end bookmark, then carries on as the watch', async () => {
      const p = phases({ streamingList: true });
      p.watches.push({ lines: [event('ADDED', obj('a', '6')), event('MODIFIED', obj('a', '7')), bookmark('7'), end, event('MODIFIED', obj('a', '9'))], end: { kind: 'closed' } });
      expect(await p.step({ kind: 'streamingList', reason: 'initial' })).to.deep.equal({ kind: 'watch', resourceVersion: '9' });
      expect(p.requests).to.deep.equal([
        'watch watch=1&allowWatchBookmarks=true&timeoutSeconds=300&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=',
      ]);
      expect(p.events.map((e) => e.type)).to.deep.equal(['Restart', 'Listed', 'Synced', 'Modified']);
      expect(p.hooks).to.deep.equal(['relist initial', 'watchRestart closed']);
    });

    it('is no list when cut short: closed, it lists again; dropped, it backs off first, counted as a list', async () => {
      const p = phases({ streamingList: true });
      p.watches.push({ lines: [event('ADDED', obj('a', '6'))], end: { kind: 'closed' } });
      p.watches.push({ lines: [event('ADDED', obj('a', '6'))], end: { kind: 'dropped' } });
      expect(await p.step({ kind: 'streamingList', reason: 'initial' })).to.deep.equal({ kind: 'streamingList', reason: 'retry' });
      expect(await p.step({ kind: 'streamingList', reason: 'expired' })).to.deep.equal({
        kind: 'backoff',
        verb: 'list',
        reason: 'watch dropped',
        next: { kind: 'streamingList', reason: 'expired' },
      });
    });

    it('falls back to paged lists, for good, on a server that rejects it (400/422)', async () => {
      const p = phases({ streamingList: true });
      p.watches.push({ end: { kind: 'failed', failure: status(422) } });
      p.watches.push({ end: { kind: 'failed', failure: status(410) } });
      expect(await p.step({ kind: 'streamingList', reason: 'initial' })).to.deep.equal({ kind: 'list', reason: 'initial' });
      expect(p.hooks).to.deep.equal(['relist initial']);
      expect(await p.step({ kind: 'watch', resourceVersion: '5' })).to.deep.include({ next: { kind: 'list', reason: 'expired' } });
    });

    it('fails on a fatal status other than 400/422 as a list', async () => {
      const p = phases({ streamingList: true });
      p.watches.push({ end: { kind: 'failed', failure: status(404) } });
      const next = (await p.step({ kind: 'streamingList', reason: 'initial' })) as Extract<Phase, { kind: 'failed' }>;
      expect([next.kind, next.error.verb, next.error.code]).to.deep.equal(['failed', 'list', 404]);
    });
  });

  describe('backoff', () => {
    it('waits 800 ms doubling, in virtual time, then goes to its next phase', async () => {
      const p = phases({ backoff: { jitter: 0 } });
      const next: Phase = { kind: 'watch', resourceVersion: '5' };
      const waited: number[] = [];
      for (let i = 0; i < 3; i++) {
        const before = p.scheduler.now();
        expect(await p.step({ kind: 'backoff', verb: 'watch', reason: 'watch dropped', next })).to.deep.equal(next);
        waited.push(p.scheduler.now() - before);
      }
      expect(waited).to.deep.equal([800, 1600, 3200]);
      expect(p.hooks).to.deep.equal(['retry watch 800 watch dropped', 'retry watch 1600 watch dropped', 'retry watch 3200 watch dropped']);
    });

    it('waits out a Retry-After longer than the backoff, up to the longest Node timer', async () => {
      const p = phases({ backoff: { jitter: 0 } });
      const next: Phase = { kind: 'list', reason: 'initial' };
      await p.step({ kind: 'backoff', verb: 'list', reason: '429', code: 429, retryAfterSeconds: 3, next });
      await p.step({ kind: 'backoff', verb: 'list', reason: '429', code: 429, retryAfterSeconds: 9_999_999_999, next });
      expect(p.hooks).to.deep.equal(['retry list 3000 429 429', `retry list ${2 ** 31 - 1} 429 429`]);
      expect(p.scheduler.now()).to.equal(3000 + 2 ** 31 - 1);
    });

    it('stops at once when aborted during the wait', async () => {
      const p = phases();
      const waiting = p.reflector.step({ kind: 'backoff', verb: 'watch', reason: 'watch idle', next: { kind: 'watch', resourceVersion: '5' } });
      p.stop.abort();
      expect(await waiting).to.deep.equal({ kind: 'stopped' });
      expect(p.scheduler.now()).to.equal(0);
    });
  });

  it('refuses a maxObjectBytes that is not a positive number, naming it and the resource', () => {
    for (const bad of [0, -1, Number.NaN]) {
      expect(() => phases({ maxObjectBytes: bad })).to.throw(RangeError, `listWatch of configmaps: maxObjectBytes must be a positive number of bytes, got ${bad}`);
    }
  });

  it('runs from the first list to the end a fatal fault means', async () => {
    const p = phases();
    p.pages.push(page([{ metadata: { name: 'a' } }], { resourceVersion: '3' }));
    p.watches.push({ lines: [event('ADDED', obj('b', '4'))], end: { kind: 'closed' } });
    p.watches.push({ end: { kind: 'failed', failure: status(500) } });
    p.watches.push({ end: { kind: 'failed', failure: status(404) } });
    const end = await settle(p.reflector.run(), p.scheduler);
    expect(end.kind).to.equal('failed');
    expect(p.requests.map((r) => r.replace(/&.*resourceVersion=/, ' from '))).to.deep.equal(['list limit=500', 'watch watch=1 from 3', 'watch watch=1 from 4', 'watch watch=1 from 4']);
    expect(p.hooks).to.deep.equal(['relist initial', 'watchRestart closed', 'watchRestart error', 'retry watch 800 500 R500: m500 500']);
    expect(p.events.map((e) => e.type)).to.deep.equal(['Restart', 'Listed', 'Synced', 'Added']);
  });

  describe('with a shard (shardSelector)', () => {
    // The share is exactly the hash of a's uid: a is in it, every other object out.
    const mine = fnv1a64('uid-a');
    function sharded() {
      const said: string[] = [];
      const shard = new SourceShard(resolveShard({ by: 'uid', ranges: [{ start: mine, end: mine + 1n }] }, 'configmaps'), 'configmaps', silentLogger, { shardFilter: (_r, where) => said.push(where) }, {});
      return { ...phases({}, shard), said, text: shard.shard.text };
    }

    it('sends the selector on every list page and watch', async () => {
      const p = sharded();
      p.pages.push(page([], { resourceVersion: '3', continue: 'c1' }), page([], { resourceVersion: '3' }));
      await p.step({ kind: 'list', reason: 'initial' });
      await p.step({ kind: 'list', reason: 'initial', continue: 'c1' });
      await p.step({ kind: 'watch', resourceVersion: '3' });
      const selectors = p.requests.map((r) => new URLSearchParams(r.slice(r.indexOf(' ') + 1)).get('shardSelector'));
      expect(selectors).to.deep.equal([p.text, p.text, p.text]);
    });

    it('trusts a list answered with shardInfo: every item passes, and the watch after it is not filtered', async () => {
      const p = sharded();
      p.pages.push({ kind: 'ok', page: { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '3', shardInfo: { selector: p.text } } }, items: [obj('a', '1'), obj('b', '2')] });
      p.watches.push({ lines: [event('ADDED', obj('c', '4'))], end: { kind: 'aborted' } });
      expect(await p.step({ kind: 'list', reason: 'initial' })).to.deep.equal({ kind: 'watch', resourceVersion: '3' });
      await p.step({ kind: 'watch', resourceVersion: '3' });
      expect(p.events.map((e) => ('object' in e ? `${e.type} ${e.object.metadata.name}` : e.type))).to.deep.equal(['Restart', 'Listed a', 'Listed b', 'Synced', 'Added c']);
      expect(p.said).to.deep.equal(['server']);
    });

    it('filters on its side after a list without shardInfo: items and watch events outside the ranges are dropped', async () => {
      const p = sharded();
      p.pages.push(page([obj('a', '1'), obj('b', '2')], { resourceVersion: '3' }));
      p.watches.push({
        lines: [event('ADDED', obj('c', '4')), event('MODIFIED', obj('a', '5')), event('DELETED', obj('b', '6')), bookmark('7')],
        end: { kind: 'closed' },
      });
      await p.step({ kind: 'list', reason: 'initial' });
      // A dropped event still moves the resourceVersion on: the watch resumes after it.
      expect(await p.step({ kind: 'watch', resourceVersion: '3' })).to.deep.equal({ kind: 'watch', resourceVersion: '7' });
      expect(p.events.map((e) => ('object' in e ? `${e.type} ${e.object.metadata.name}` : e.type))).to.deep.equal(['Restart', 'Listed a', 'Synced', 'Modified a', 'Bookmark']);
      expect(p.said).to.deep.equal(['client']);
    });

    it('says the mode again only when it changes (a server upgraded to honour it)', async () => {
      const p = sharded();
      p.pages.push(page([], { resourceVersion: '3' }), page([], { resourceVersion: '4' }));
      p.pages.push({ kind: 'ok', page: { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '5', shardInfo: { selector: p.text } } }, items: [] });
      for (let i = 0; i < 3; i++) await p.step({ kind: 'list', reason: 'expired' });
      expect(p.said).to.deep.equal(['client', 'server']);
    });

    it('filters a streaming list on its side, since it carries no shardInfo', async () => {
      const p = sharded();
      p.watches.push({ lines: [event('ADDED', obj('a', '1')), event('ADDED', obj('b', '2')), bookmark('3', { 'k8s.io/initial-events-end': 'true' })], end: { kind: 'aborted' } });
      await p.step({ kind: 'streamingList', reason: 'initial' });
      expect(p.events.map((e) => ('object' in e ? `${e.type} ${e.object.metadata.name}` : e.type))).to.deep.equal(['Restart', 'Listed a', 'Synced']);
      expect(p.said).to.deep.equal(['client']);
    });

    it('names the shardSelector in the error of a 400', async () => {
      const p = sharded();
      p.pages.push({ kind: 'failed', failure: status(400) });
      const next = await p.step({ kind: 'list', reason: 'initial' });
      expect(next.kind).to.equal('failed');
      expect((next as { error: Error }).error.message).to.contain(`with shardSelector "${p.text}"`);
    });
  });
});
