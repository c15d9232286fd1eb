import { expect } from 'chai';
import { silentLogger, type Logger } from 'rxkube';
import type { TimelineEntry } from 'rxkube/testing';
import { TimelineHub } from '../../src/controller/timelineHub.js';
import { testScheduler } from '../support/objects.js';

describe('TimelineHub: how entries are delivered', () => {
  it('calls a plain callback and an observer object (as its `this`) with each entry, and an observer without next still counts as a reader', () => {
    const hub = new TimelineHub('c', testScheduler(), silentLogger, () => () => undefined);
    const seen: string[] = [];
    const counter = {
      count: 0,
      next(this: { count: number }, e: TimelineEntry) {
        this.count++;
        seen.push(`object ${e.type}`);
      },
    };
    const a = hub.timeline.subscribe((e) => seen.push(`fn ${e.type}`));
    const b = hub.timeline.subscribe(counter);
    hub.leadership(true, 'me');
    a.unsubscribe();
    b.unsubscribe();
    expect(hub.active).to.equal(false);
    const c = hub.timeline.subscribe({ complete: () => undefined });
    expect(hub.active).to.equal(true);
    c.unsubscribe();
    expect(seen).to.deep.equal(['fn leadership', 'object leadership']);
    expect(counter.count).to.equal(1);
  });

  it('skips a subscriber from the moment another unsubscribes it during an entry, and one that throws keeps its place', () => {
    const logged: string[] = [];
    const logger: Logger = { ...silentLogger, error: (_fields, message) => logged.push(String(message)) };
    const hub = new TimelineHub('c', testScheduler(), logger, () => () => undefined);
    const seen: string[] = [];
    hub.timeline.subscribe(() => {
      throw new Error('broken');
    });
    const later: { unsubscribe(): void }[] = [];
    hub.timeline.subscribe((e) => {
      seen.push(`first ${String(e.type === 'leadership' && e.leading)}`);
      for (const s of later) s.unsubscribe();
    });
    later[0] = hub.timeline.subscribe((e) => seen.push(`later ${String(e.type === 'leadership' && e.leading)}`));
    hub.leadership(true, 'me');
    hub.leadership(false, 'me');
    expect(seen).to.deep.equal(['first true', 'first false']);
    expect(logged).to.deep.equal(['a timeline subscriber threw; the controller goes on', 'a timeline subscriber threw; the controller goes on']);
  });
});
