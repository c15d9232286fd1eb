import type { Subscription } from 'rxjs';
import type { Controller, KubeObject, ReconcileOutcome } from 'rxkube';

export interface Running {
  /** Settles once every controller has completed or errored. */
  readonly finished: Promise<void>;
  unsubscribe(): void;
}

/**
 * Subscribes to controllers that stop when `signal` aborts: every outcome
 * goes to `onOutcome`; a controller that errors, or completes before the
 * abort, is reported to `onEnded` (a controller must never end on its own).
 */
export function runAll(
  controllers: readonly { name: string; controller: Controller<KubeObject> }[],
  signal: AbortSignal,
  onOutcome: (controller: string, outcome: ReconcileOutcome) => void,
  onEnded: (controller: string, how: string) => void,
): Running {
  const subscriptions: Subscription[] = [];
  const finished = controllers.map(
    ({ name, controller }) =>
      new Promise<void>((resolve) => {
        subscriptions.push(
          controller.subscribe({
            next: (o) => onOutcome(name, o),
            error: (err: unknown) => {
              onEnded(name, `errored: ${String(err)}`);
              resolve();
            },
            complete: () => {
              if (!signal.aborted) onEnded(name, 'completed on its own');
              resolve();
            },
          }),
        );
      }),
  );
  return {
    finished: Promise.all(finished).then(() => undefined),
    unsubscribe: () => {
      for (const s of subscriptions) s.unsubscribe();
    },
  };
}

/** Waits for `running` to finish, `ms` at most, then unsubscribes what is left. */
export async function stopWithin(running: Running | undefined, ms: number): Promise<void> {
  if (running === undefined) return;
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([running.finished, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
  running.unsubscribe();
}
