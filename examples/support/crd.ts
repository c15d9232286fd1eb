import { asyncScheduler, firstValueFrom, timer, type SchedulerLike } from 'rxjs';
import type { KubeClient, KubeObject } from 'rxkube';

/** How `installCrdAndWait` checks. */
export interface InstallCrdOptions {
  signal?: AbortSignal;
  /** How many checks after the first before it gives up (default 300). */
  attempts?: number;
  /** Milliseconds between checks, on `scheduler` (default 100). */
  interval?: number;
  /** Where the waits between checks run (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
}

type WithConditions = KubeObject & { status?: { conditions?: { type: string; status: string }[] } };

/**
 * Applies a CustomResourceDefinition (server-side apply, forced: idempotent)
 * and waits until the API server reports it `Established`, so that its
 * objects can be listed and watched. Counts checks rather than reading the
 * clock, and throws naming the CRD once `attempts` more checks found it
 * not Established.
 */
export async function installCrdAndWait(client: KubeClient, crd: KubeObject, options: InstallCrdOptions = {}): Promise<void> {
  const signal = options.signal ? { signal: options.signal } : {};
  const attempts = options.attempts ?? 300;
  await client.apply(crd, { force: true, ...signal });
  for (let attempt = 0; ; attempt++) {
    const live = await client.get<WithConditions>(crd, signal);
    if (live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return;
    if (attempt >= attempts) throw new Error(`CustomResourceDefinition ${crd.metadata.name ?? ''} not Established after ${attempt + 1} checks`);
    await firstValueFrom(timer(options.interval ?? 100, options.scheduler ?? asyncScheduler));
  }
}
