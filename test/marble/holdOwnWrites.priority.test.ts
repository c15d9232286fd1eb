import { expect } from 'chai';
import { Subject, map, type OperatorFunction } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';
import { holdOwnWrites } from '../../src/controller/holdOwnWrites.js';
import { OwnWrites } from '../../src/controller/ownWrites.js';
import { silentLogger } from '../../src/logger.js';
import type { KeyTrigger, ReconcileOutcome } from '../../src/operators/reconcileByKey.js';
import type { StoreEvent } from '../../src/store/indexer.js';
import { Store } from '../../src/store/store.js';
import type { KubeObject } from '../../src/types.js';

const cm = (name: string, resourceVersion: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', resourceVersion, uid: `uid-${name}` } });

describe('holdOwnWrites with priorities', () => {
  it('lets a held key go on with the priority of the most urgent trigger that came while it waited, and passes other triggers as they came', () => {
    const scheduler = new TestScheduler(() => undefined);
    const store = new Store();
    const writes = new OwnWrites([{ group: '', kind: 'ConfigMap', lister: store.lister }], scheduler, 1000);
    const hold = holdOwnWrites(writes, { scheduler, logger: silentLogger });
    // The queue stands in as what reached it: each trigger as it came, priority and all.
    const reached: KeyTrigger[] = [];
    const queue: OperatorFunction<KeyTrigger, ReconcileOutcome> = map((trigger) => {
      reached.push(trigger);
      return { key: typeof trigger === 'string' ? trigger : trigger.key, result: 'success' } as ReconcileOutcome;
    });
    const triggers = new Subject<KeyTrigger>();
    const subscription = triggers.pipe(hold.around(queue)).subscribe();
    try {
      writes.record('ns/a', { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'ns', name: 'a', resourceVersion: '5', uid: 'uid-a', gone: false });
      triggers.next({ key: 'ns/a', priority: -100 });
      triggers.next({ key: 'ns/b', priority: -100 });
      triggers.next({ key: 'ns/a', priority: 10 });
      triggers.next('ns/a');
      expect(reached).to.deep.equal([{ key: 'ns/b', priority: -100 }]);
      writes.observe(0, { type: 'Added', key: 'ns/a', object: cm('a', '5'), store: store.lister } as StoreEvent);
      expect(reached).to.deep.equal([{ key: 'ns/b', priority: -100 }, { key: 'ns/a', priority: 10 }]);
    } finally {
      subscription.unsubscribe();
    }
  });
});
