import { expect } from 'chai';
import { map, type Observable } from 'rxjs';
import { deltas, ListWatchError, silentLogger, type KubeObject, type ListWatchEvent, type SourceStatus, type StoreEvent } from 'rxkube';
import { indexer } from 'rxkube';
import { whenServed, type WhenServedOptions } from '../../src/sources/whenServed.js';
import { obj, testScheduler } from '../support/objects.js';

const notServed = (verb: 'list' | 'watch') =>
  new ListWatchError(`cannot ${verb} widgets.example.com in all namespaces: the server could not find the requested resource`, 404, 'NotFound', verb, 'widgets.example.com');
const a = obj('a', '1');
const b = obj('b', '2');
const events: Record<string, ListWatchEvent> = {
  r: { type: 'Restart' },
  a: { type: 'Listed', object: a },
  b: { type: 'Added', object: b },
  s: { type: 'Synced', resourceVersion: '1' },
  e: { type: 'Synced', resourceVersion: '' },
};

/** `open` hands out the scripted list-watches in turn, one per call; the monitor's statuses are kept with their time. */
function scripted(runs: Observable<ListWatchEvent>[], probe: () => Observable<boolean>, now: () => number, extra: Partial<WhenServedOptions> = {}) {
  const statuses: { at: number; status: SourceStatus }[] = [];
  const opened: number[] = [];
  let next = 0;
  const output = whenServed<KubeObject>(
    () => {
      opened.push(now());
      const run = runs[next++];
      if (run === undefined) throw new Error('opened more often than scripted');
      return run;
    },
    {
      resource: 'widgets.example.com',
      probe,
      scheduler: extra.scheduler as WhenServedOptions['scheduler'],
      logger: silentLogger,
      random: () => 0,
      monitor: { status: (_resource, status) => statuses.push({ at: now(), status }) },
      ...extra,
    },
  );
  return { output, statuses, opened };
}

describe('whenServed: a list-watch whose resource type comes and goes, in virtual time', () => {
  it('empties and syncs the cache at a 404, then probes after 1 s, 2 s, 4 s, and lists once the type is served', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const answers = cold<boolean>('f', { f: false });
      const probes: number[] = [];
      const probe = () => {
        probes.push(scheduler.now());
        return probes.length < 3 ? answers : cold('t', { t: true });
      };
      const s = scripted([cold<ListWatchEvent>('#', {}, notServed('list')), cold<ListWatchEvent>('r-a-s', events)], probe, () => scheduler.now(), { scheduler });
      // 0: Restart and Synced (empty); probes at 1000, 3000, 7000; the list at 7000.
      expectObservable(s.output).toBe('(re) 6996ms r-a-s', events);
      scheduler.flush();
      expect(probes).to.deep.equal([1000, 3000, 7000]);
      expect(s.opened).to.deep.equal([0, 7000]);
      expect(s.statuses).to.deep.equal([
        { at: 0, status: { healthy: false, verb: 'list', reason: 'not served (404 NotFound); waiting for the type to be served', code: 404 } },
        { at: 7000, status: { healthy: true } },
      ]);
      expectSubscriptions(answers.subscriptions).toBe(['1000ms (^!)', '3000ms (^!)']);
    });
  });

  it('turns what the store held into Deleted deltas when the type goes away, and lists it again when it returns', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const first = cold<ListWatchEvent>('r-a-s-b-#', events, notServed('watch'));
      const again = cold<ListWatchEvent>('r-a-s', events);
      const probe = () => cold('t', { t: true });
      const s = scripted([first, again], probe, () => scheduler.now(), { scheduler });
      const show = map((e: StoreEvent) => ('key' in e ? `${e.type}:${e.key.slice(8)}${'finalStateUnknown' in e && e.finalStateUnknown ? '†' : ''}` : `${e.type}(${e.store.size})`));
      expectObservable(s.output.pipe(deltas(), indexer(), show)).toBe('--a-s-b-(xyz) 997ms a-s', {
        a: 'Added:a',
        s: 'Synced(1)',
        b: 'Added:b',
        x: 'Deleted:a†',
        y: 'Deleted:b†',
        z: 'Synced(0)',
      });
    });
  });

  it('counts a probe that fails as "not yet", and starts its pauses over once a list has completed', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const answers: Observable<boolean>[] = [cold('#', {}, new Error('connection refused')), cold('t', { t: true }), cold('t', { t: true })];
      const probes: number[] = [];
      const probe = () => {
        probes.push(scheduler.now());
        return answers[probes.length - 1] as Observable<boolean>;
      };
      // Gone at 0; probes at 1000 (fails) and 3000 (served); listed at 3000..3002, gone at 3004; the pause is 1 s again.
      const s = scripted([cold<ListWatchEvent>('#', {}, notServed('list')), cold<ListWatchEvent>('r-s-#', events, notServed('watch')), cold<ListWatchEvent>('r', events)], probe, () => scheduler.now(), { scheduler });
      expectObservable(s.output).toBe('(re) 2996ms r-s-(re) 996ms r', events);
      scheduler.flush();
      expect(probes).to.deep.equal([1000, 3000, 4004]);
    });
  });

  it('keeps probing more slowly, capped, while discovery says served but the list still answers 404', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold }) => {
      const gone = cold<ListWatchEvent>('#', {}, notServed('list'));
      const s = scripted(Array.from({ length: 10 }, () => gone), () => cold('t', { t: true }), () => scheduler.now(), { scheduler, poll: { maxMs: 4_000 } });
      const running = s.output.subscribe();
      scheduler.schedule(() => running.unsubscribe(), 28_000);
      scheduler.flush();
      expect(s.opened).to.deep.equal([0, 1000, 3000, 7000, 11_000, 15_000, 19_000, 23_000, 27_000]);
    });
  });

  it('says Restart once when the list that met the 404 had said it already', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const s = scripted([cold<ListWatchEvent>('r#', events, notServed('list'))], () => cold<boolean>('-'), () => scheduler.now(), { scheduler });
      expectObservable(s.output).toBe('re', events);
    });
  });

  it('ends with any error other than a 404, and completes when the list-watch completes', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      const badSelector = new ListWatchError('cannot list widgets.example.com in all namespaces: bad selector', 400, 'BadRequest', 'list', 'widgets.example.com');
      const never = () => cold<boolean>('-');
      expectObservable(scripted([cold<ListWatchEvent>('r-#', events, badSelector)], never, () => scheduler.now(), { scheduler }).output).toBe('r-#', events, badSelector);
      expectObservable(scripted([cold<ListWatchEvent>('r-s-|', events)], never, () => scheduler.now(), { scheduler }).output).toBe('r-s-|', events);
    });
  });

  it('stops probing when unsubscribed during a wait, and completes when its signal aborts during one', () => {
    const scheduler = testScheduler();
    scheduler.run(({ cold, expectObservable, expectSubscriptions }) => {
      const answer = cold<boolean>('---f', { f: false });
      const s = scripted([cold<ListWatchEvent>('#', {}, notServed('list'))], () => answer, () => scheduler.now(), { scheduler });
      expectObservable(s.output, '^ 1001ms !').toBe('(re)', events);
      expectSubscriptions(answer.subscriptions).toBe(['1000ms ^-!']);
      const stop = new AbortController();
      scheduler.schedule(() => stop.abort(), 1500);
      const aborted = scripted([cold<ListWatchEvent>('#', {}, notServed('list'))], () => cold<boolean>('f', { f: false }), () => scheduler.now(), { scheduler, signal: stop.signal });
      expectObservable(aborted.output).toBe('(re) 1496ms |', events);
    });
  });
});
