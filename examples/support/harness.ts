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
  /** Subscribes to a controller until the end of the test (or `stopAll`). */
  start(controller: Observable<ReconcileOutcome>): void;
  stopAll(): void;
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
  const running: Subscription[] = [];
  const outcomes: ReconcileOutcome[] = [];
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
    start: (controller) => void running.push(controller.subscribe({ next: (o) => outcomes.push(o) })),
    stopAll: () => {
      for (const s of running.splice(0)) s.unsubscribe();
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
    harness.stopAll();
    await server?.close();
    server = undefined;
    client = undefined;
  });
  return harness;
}
