import type { Observable, Subscription } from 'rxjs';
import { kubeClient, silentLogger, type KubeClient, type KubeObject, type ReconcileOutcome } from 'rxkube';
import { startApiServer, type ApiServer } from 'rxkube/testing';

/** An events.k8s.io/v1 Event as the embedded server stores it. */
export type StoredEvent = KubeObject & { type: string; reason: string; note?: string; regarding: { name: string } };

export interface Harness {
  readonly server: ApiServer;
  /** A client writing as field manager `test`. */
  readonly client: KubeClient;
  /** Every outcome of the controllers started since the test began (or since `outcomes.length = 0`). */
  readonly outcomes: ReconcileOutcome[];
  /**
   * Runs a controller until the end of the test (or `stopAll`). Given a
   * function, it passes the signal to shut the controller down with, and
   * `stopAll` waits until that shutdown is over.
   */
  start(controller: Observable<ReconcileOutcome> | ((signal: AbortSignal) => Observable<ReconcileOutcome>)): void;
  /** Stops every controller started: those given a signal gracefully, waited for to the end (Events written, Lease released). */
  stopAll(): Promise<void>;
  /** The Events stored with that reason, in every namespace. */
  events(reason: string): StoredEvent[];
}

/**
 * Mocha hooks for an example's integration test: a fresh embedded API
 * server per test, controllers stopped and the server closed after it.
 */
export function useEmbeddedServer(): Harness {
  let server: ApiServer | undefined;
  let client: KubeClient | undefined;
  const running: { subscription: Subscription; stop?: AbortController; ended: Promise<void> }[] = [];
  const outcomes: ReconcileOutcome[] = [];
  const failures: unknown[] = [];
  const harness: Harness = {
    get server() {
      if (server === undefined) throw new Error('the embedded API server runs only inside a test');
      return server;
    },
    get client() {
      if (client === undefined) throw new Error('the client exists only inside a test');
      return client;
    },
    outcomes,
    start: (controller) => {
      const stop = typeof controller === 'function' ? new AbortController() : undefined;
      const source = typeof controller === 'function' ? controller((stop as AbortController).signal) : controller;
      let subscription: Subscription | undefined;
      const ended = new Promise<void>((resolve) => {
        subscription = source.subscribe({
          next: (o) => outcomes.push(o),
          // A controller that fails fails the test (in afterEach), whether or not the test was waiting for it.
          error: (err: unknown) => {
            failures.push(err);
            resolve();
          },
          complete: () => resolve(),
        });
      });
      running.push({ subscription: subscription as Subscription, ...(stop ? { stop } : {}), ended });
    },
    stopAll: async () => {
      const all = running.splice(0);
      for (const r of all) {
        if (r.stop) r.stop.abort();
        else r.subscription.unsubscribe();
      }
      await Promise.all(all.filter((r) => r.stop !== undefined).map((r) => r.ended));
    },
    events: (reason) =>
      harness.server.snapshot({ group: 'events.k8s.io', version: 'v1', resource: 'events' }).filter((e) => (e as StoredEvent).reason === reason) as StoredEvent[],
  };
  beforeEach(async () => {
    server = await startApiServer({ logger: silentLogger });
    client = kubeClient(server.kubeConfig(), { fieldManager: 'test' });
    outcomes.length = 0;
  });
  afterEach(async () => {
    await harness.stopAll();
    const failed = failures.splice(0);
    if (failed.length > 0) {
      await server?.close();
      server = undefined;
      throw new Error(`a controller of this test failed: ${failed.map((e) => (e instanceof Error ? e.message : String(e))).join('; ')}`, { cause: failed[0] });
    }
    await server?.close();
    server = undefined;
    client = undefined;
  });
  return harness;
}
