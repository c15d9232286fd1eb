/**
 * The main job, for now: a scripted watch stream through the read path
 * (fromWatchEvents → deltas → indexer), printing each delta and the store.
 * A later step turns this into the full demo against the embedded API server.
 */
import { from } from 'rxjs';
import { deltas, fromWatchEvents, indexer, isDelta, type KubeObject, type RawWatchEvent } from 'rxkube';

const cm = (name: string, rv: string, uid = `uid-${name}`): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'demo', uid, resourceVersion: rv },
});

const script: RawWatchEvent[] = [
  { type: 'ADDED', object: cm('settings', '1') },
  { type: 'ADDED', object: cm('flags', '2') },
  { type: 'BOOKMARK', object: { metadata: { resourceVersion: '2', annotations: { 'k8s.io/initial-events-end': 'true' } } } },
  { type: 'MODIFIED', object: cm('settings', '3') },
  { type: 'MODIFIED', object: cm('settings', '3') },
  { type: 'DELETED', object: cm('flags', '4') },
  { type: 'ADDED', object: cm('flags', '5', 'uid-flags-2') },
];

from(script)
  .pipe((events) => fromWatchEvents(events, { initialEvents: true }), deltas(), indexer())
  .subscribe({
    next(event) {
      const what = isDelta(event) ? `${event.type.padEnd(7)} ${event.key}${event.initial ? ' (initial)' : ''}` : `${event.type} at ${event.resourceVersion}`;
      console.log(`${what.padEnd(40)} store: [${event.store.keys().sort().join(', ')}] synced=${event.store.synced}`);
    },
    complete: () => console.log('done'),
  });
