import { KubeConfig } from '@kubernetes/client-node';
import { map, type Observable, type SchedulerLike } from 'rxjs';
import type { Logger } from '../../logger.js';
import { InformerFactory, type SourceOptions } from '../../informers/informerFactory.js';
import { resourceName, type ResourceRef, type KubeObject, type ListWatchEvent } from '../../types.js';

/** Where an informer's list-watch events come from in a test: a marble diagram, or a memory client's watch. */
export type InformerInput = (resource: ResourceRef, selectors: Pick<SourceOptions<KubeObject>, 'labelSelector' | 'fieldSelector' | 'shardSelector'>) => Observable<ListWatchEvent>;

/**
 * An `InformerFactory` whose informers read `input` instead of opening a
 * list-watch, so that `controller()` runs unchanged in a test: the real
 * informers (the same `deltas()`, `indexer()`, `shareSource()` and resync),
 * fed from marble diagrams or an in-memory cluster.
 *
 * One informer per resource and selectors, as the real factory shares
 * them; indexes asked for by later callers join those of the first until
 * it starts. An input that completes is a finished watch: its informer
 * keeps the last state, and a later subscriber gets that state (and then
 * completion) rather than a second run of the input.
 */
export class MarbleInformers extends InformerFactory {
  constructor(input: InformerInput, settings: { scheduler: SchedulerLike; logger?: Logger }) {
    super(new KubeConfig(), {
      scheduler: settings.scheduler,
      ...(settings.logger ? { logger: settings.logger } : {}),
      source: <T extends KubeObject>(resource: ResourceRef, options: SourceOptions<T>) => {
        const raw = input(resource, options) as Observable<ListWatchEvent<T>>;
        const transform = options.transform;
        if (transform === undefined) return raw;
        const transformed = (object: T): T => {
          try {
            return transform(object);
          } catch (err) {
            const { namespace, name } = object.metadata ?? {};
            throw new Error(`the transform of ${resourceName(resource)} threw for ${namespace ? `${namespace}/` : ''}${name ?? '(no name)'}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
          }
        };
        return raw.pipe(map((event) => ('object' in event ? { ...event, object: transformed(event.object) } : event)));
      },
    });
  }
}
