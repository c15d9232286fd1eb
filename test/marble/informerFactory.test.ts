import { KubeConfig } from '@kubernetes/client-node';
import { expect } from 'chai';
import { asyncScheduler, map, type Observable } from 'rxjs';
import { InformerFactory, type KubeObject, type ListWatchEvent } from 'rxkube';
import { type InformerSource } from '../../src/informers/informerFactory.js';
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
