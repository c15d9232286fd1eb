import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { asyncScheduler, BehaviorSubject, concat, map, NEVER, of, type Observable } from 'rxjs';
import { InformerFactory, type KubeObject, type ListWatchEvent } from 'rxkube';
import { type InformerSource, type SourceOptions } from '../../src/informers/informerFactory.js';
import type { ControllerOptions } from '../../src/controller/controller.js';
import { wire } from '../../src/controller/wiring.js';
import type { ShardSelection } from '../../src/sources/sourceShard.js';
import { MarbleInformers } from '../../src/testing/marble/marbleInformers.js';
import { obj } from '../support/objects.js';
import { unhandledErrorsOf } from './callbackErrors.support.js';

const configmaps = { version: 'v1', resource: 'configmaps', namespace: 'default' };

/** What a subscriber to `events` saw, as strings. */
function watch(events: Observable<{ type: string }>, into: string[]): void {
  events.subscribe({
    next: (e) => into.push(e.type),
    error: (err: unknown) => into.push(`error: ${(err as Error).message}`),
    complete: () => into.push('complete'),
  });
}

describe('InformerFactory with a source of its own', () => {
  it('release() empties the store of an informer no one subscribes to, and leaves one still subscribed alone', () => {
    const listed: ListWatchEvent[] = [{ type: 'Restart' }, { type: 'Listed', object: obj('a', '1') }, { type: 'Synced', resourceVersion: '1' }];
    const source: InformerSource = <T extends KubeObject>() => concat(of(...listed), NEVER) as Observable<ListWatchEvent<T>>;
    const factory = new InformerFactory(new KubeConfig(), { source });
    const informer = factory.informer(configmaps);
    const first = informer.events.subscribe();
    const second = informer.events.subscribe();
    first.unsubscribe();
    expect(factory.release(informer)).to.equal(false);
    expect(informer.store.keys()).to.deep.equal(['default/a']);
    second.unsubscribe();
    expect(new InformerFactory(new KubeConfig()).release(informer), 'another factory').to.equal(false);
    expect(informer.store.size).to.equal(1);
    expect(factory.release(informer)).to.equal(true);
    expect(informer.store.size).to.equal(0);
  });

  it('errors the events, naming the source option and the resource, when the source throws', () => {
    const thrown = new Error('no such fixture');
    let caught: unknown;
    const unhandled = unhandledErrorsOf(() => {
      const source: InformerSource = () => {
        throw thrown;
      };
      const informer = new InformerFactory(new KubeConfig(), { source }).informer(configmaps);
      informer.events.subscribe({ error: (err: unknown) => (caught = err) });
    });
    expect(unhandled).to.deep.equal([]);
    expect((caught as Error).message).to.equal('InformerFactory: the source option threw for configmaps in namespace "default": no such fixture');
    expect((caught as Error).cause).to.equal(thrown);
  });

  it('errors the events, naming the source option, when the source returns no Observable', () => {
    const seen: string[] = [];
    const unhandled = unhandledErrorsOf(() => {
      const source = (() => undefined) as unknown as InformerSource;
      watch(new InformerFactory(new KubeConfig(), { source }).informer(configmaps).events, seen);
    });
    expect(unhandled).to.deep.equal([]);
    expect(seen).to.deep.equal(['error: InformerFactory: the source option returned undefined for configmaps in namespace "default"; expected an Observable']);
  });

  it('gives every subscriber the error of a callback inside the source, after what came before it', () => {
    const first: string[] = [];
    const late: string[] = [];
    const unhandled = unhandledErrorsOf(({ cold }) => {
      // A transform of one's own that fails on the second object.
      const source = (<T extends KubeObject>() =>
        cold<ListWatchEvent>('r-a-s-b', {
          r: { type: 'Restart' },
          a: { type: 'Listed', object: obj('a', '1') },
          s: { type: 'Synced', resourceVersion: '1' },
          b: { type: 'Added', object: obj('b', '2') },
        }).pipe(
          map((event) => {
            if ('object' in event && event.object.metadata.name === 'b') throw new Error('transform failed');
            return event;
          }),
        ) as Observable<ListWatchEvent<T>>) as InformerSource;
      const informer = new InformerFactory(new KubeConfig(), { source }).informer(configmaps);
      watch(informer.events, first);
      cold('-----x').subscribe(() => watch(informer.events, late));
    });
    expect(unhandled).to.deep.equal([]);
    expect(first).to.deep.equal(['Added', 'Synced', 'error: transform failed']);
    expect(late, 'the replayed state, then the same error').to.deep.equal(['Added', 'Synced', 'error: transform failed']);
  });
});

describe('MarbleInformers (rxkube/testing)', () => {
  it('errors the events when the informer\'s transform throws, naming the transform and the object, the thrown error as cause', () => {
    const thrown = new TypeError('no labels');
    let caught: unknown;
    const unhandled = unhandledErrorsOf(({ cold }) => {
      // Inside TestScheduler.run, asyncScheduler is virtual time.
      const informers = new MarbleInformers(
        () => cold<ListWatchEvent>('r-a', { r: { type: 'Restart' }, a: { type: 'Listed', object: obj('a', '1') } }),
        { scheduler: asyncScheduler },
      );
      const transform = (): KubeObject => {
        throw thrown;
      };
      informers.informer(configmaps, { transform }).events.subscribe({ error: (err: unknown) => (caught = err) });
    });
    expect(unhandled).to.deep.equal([]);
    expect((caught as Error).message).to.equal('the transform of configmaps threw for default/a: no labels');
    expect((caught as Error).cause).to.equal(thrown);
  });
});

describe('InformerFactory with shard selections', () => {
  const lowerHalf = { by: 'uid' as const, ranges: [{ start: 0n, end: 1n << 63n }] };

  /** A factory whose source records the options each informer opened it with. */
  function recording() {
    const opened: SourceOptions<KubeObject>[] = [];
    const source: InformerSource = <T extends KubeObject>(_r: unknown, options: SourceOptions<T>) => {
      opened.push(options as unknown as SourceOptions<KubeObject>);
      return NEVER as Observable<ListWatchEvent<T>>;
    };
    return { factory: new InformerFactory(new KubeConfig(), { source }), opened };
  }

  it('hands the shardSelector to the source', () => {
    const { factory, opened } = recording();
    factory.informer(configmaps, { shardSelector: lowerHalf, labelSelector: 'a=b' }).events.subscribe().unsubscribe();
    expect(opened).to.deep.equal([{ labelSelector: 'a=b', shardSelector: lowerHalf }]);
  });

  it('shares one informer per shard selection: equal ranges, or ranges and the text they are sent as, share; other ranges and other Observables do not', () => {
    const { factory } = recording();
    const moving = new BehaviorSubject<ShardSelection>(lowerHalf);
    const a = factory.informer(configmaps, { shardSelector: lowerHalf });
    expect(factory.informer(configmaps, { shardSelector: { by: 'uid', ranges: [{ start: 0n, end: 1n << 63n }] } })).to.equal(a);
    expect(factory.informer(configmaps, { shardSelector: "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')" })).to.equal(a);
    expect(factory.informer(configmaps, { shardSelector: "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')" })).to.not.equal(a);
    expect(factory.informer(configmaps, { shardSelector: { by: 'namespace', ranges: lowerHalf.ranges } })).to.not.equal(a);
    expect(factory.informer(configmaps)).to.not.equal(a);
    const m = factory.informer(configmaps, { shardSelector: moving });
    expect(factory.informer(configmaps, { shardSelector: moving })).to.equal(m);
    expect(factory.informer(configmaps, { shardSelector: new BehaviorSubject<ShardSelection>(lowerHalf) })).to.not.equal(m);
  });

  it("passes a controller resource's shardSelector to its informer, and leaves the owned ones unsharded unless they say so", () => {
    const { factory, opened } = recording();
    const wiring = wire(
      {
        name: 'c',
        for: { ...configmaps, kind: 'ConfigMap', shardSelector: lowerHalf },
        owns: [{ version: 'v1', resource: 'secrets', namespace: 'default', kind: 'Secret' }],
        reconcile: () => undefined,
      } as unknown as ControllerOptions<KubeObject>,
      factory,
    );
    for (const { informer } of wiring.all) informer.events.subscribe().unsubscribe();
    expect(opened).to.deep.equal([{ shardSelector: lowerHalf }, {}]);
  });
});
