import type { Informer } from '../informers/informerFactory.js';
import { resourceName, type ResourceRef } from '../types.js';
import type { TimelineHub } from './timelineHub.js';

/**
 * Listens to each informer of a controller once (an informer it both owns
 * and watches is one informer) and tells `hub` of its events and failures,
 * under its store's name. Returns the function that stops listening: the
 * hub calls this when its first subscriber comes and that when its last
 * one leaves, so informers nobody reads for a timeline pay nothing.
 */
export function listenToInformers(hub: TimelineHub, all: readonly { resource: ResourceRef; informer: Informer }[]): () => void {
  const names = new Map<Informer, string>();
  for (const { resource, informer } of all) if (!names.has(informer)) names.set(informer, resourceName(resource));
  const stops = [...names].map(([informer, name]) =>
    informer.listen({
      event: (event) => hub.informerEvent(name, event),
      failure: (failure) => hub.informerFailure(name, failure),
    }),
  );
  return () => {
    for (const stop of stops) stop();
  };
}
