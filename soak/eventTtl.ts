import type { KubeObject } from 'rxkube';
import type { ApiServer } from 'rxkube/testing';

const events = { group: 'events.k8s.io', version: 'v1', resource: 'events' };

type StoredEvent = KubeObject & { eventTime?: string; series?: { lastObservedTime?: string } };

/**
 * kube-apiserver deletes Events a while after their last write
 * (`--event-ttl`, 1 h by default); the embedded server keeps them for ever,
 * so under the soak's workload its Events would grow all run long and the
 * heap check would measure them rather than rxkube. This deletes, every
 * `ttlMs / 2`, each Event last observed more than `ttlMs` ago, in-process.
 * A recorder that patches the series of an expired Event gets a 404 and
 * creates it again, as after a real expiry.
 */
export class EventTtl {
  expired = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly server: ApiServer,
    private readonly ttlMs: number,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => this.sweep(), this.ttlMs / 2);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Deletes every Event last observed more than the TTL before `now` (pass a later `now` to expire more). */
  sweep(now = Date.now()): void {
    for (const event of this.server.snapshot(events) as StoredEvent[]) {
      const last = Date.parse(event.series?.lastObservedTime ?? event.eventTime ?? event.metadata.creationTimestamp ?? '');
      if (!(now - last > this.ttlMs)) continue;
      if (this.server.remove({ ...events, namespace: event.metadata.namespace ?? 'default' }, event.metadata.name ?? '')) this.expired++;
    }
  }
}
