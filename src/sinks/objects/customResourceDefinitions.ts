import { asyncScheduler, firstValueFrom, timer, type SchedulerLike } from 'rxjs';
import type { KubeObject } from '../../types.js';
import { isNotFound } from '../client/errors.js';
import type { KubeClient } from '../client/kubeClient.js';
import { findCondition, type Condition } from './conditions.js';

/**
 * Installing and removing a CustomResourceDefinition, and waiting until the
 * API server has acted on it: what a controller's tests, demos and start-up
 * do before they list its kind (controller-runtime's envtest
 * `InstallCRDs`/`UninstallCRDs`). A CRD that is stored is not yet served:
 * its kind can be listed and watched once the server reports it
 * `Established`, and a deleted one is gone only after the server has
 * deleted every object of its kind.
 */

/** How `installCrd` and `uninstallCrd` wait. */
export interface CrdWaitOptions {
  /** Aborts the writes and the wait at once. */
  signal?: AbortSignal;
  /** How long to wait, in milliseconds on `scheduler` (default 60,000). */
  timeout?: number;
  /** Milliseconds between checks (default 100). */
  interval?: number;
  /** Where the waits between checks run and the timeout is measured (default `asyncScheduler`). */
  scheduler?: SchedulerLike;
}

type CrdStatus = KubeObject & { status?: { conditions?: Condition[] } };

/** A CRD object, or what `defineCustomResource` made (which holds it as `crd`). */
export type CrdSource = KubeObject | { readonly crd: KubeObject };

function crdOf(source: CrdSource): KubeObject {
  return 'crd' in source && typeof source.crd === 'object' && source.crd !== null ? source.crd : (source as KubeObject);
}

/** Checks with `check` until it returns true, every `interval` until `timeout`; throws `what` when it never did. */
async function waitUntil(check: () => Promise<boolean>, what: () => string, options: CrdWaitOptions): Promise<void> {
  const scheduler = options.scheduler ?? asyncScheduler;
  const timeout = options.timeout ?? 60_000;
  const start = scheduler.now();
  for (;;) {
    if (await check()) return;
    options.signal?.throwIfAborted();
    if (scheduler.now() - start >= timeout) throw new Error(`${what()} after ${timeout} ms`);
    await firstValueFrom(timer(options.interval ?? 100, scheduler));
  }
}

/**
 * Applies the CRD (an object, or `defineCustomResource`'s; server-side apply, forced, so that installing it again
 * changes nothing and takes over fields another manager set) and waits
 * until the API server reports it `Established`, when its kind can be
 * listed, watched and written. Fails when `timeout` passes first, naming
 * the CRD's conditions (`NamesAccepted` `False` when another CRD holds its
 * plural or kind).
 */
export async function installCrd(client: KubeClient, source: CrdSource, options: CrdWaitOptions = {}): Promise<void> {
  const crd = crdOf(source);
  const signal = options.signal === undefined ? {} : { signal: options.signal };
  const name = crd.metadata.name ?? '';
  await client.apply(crd, { force: true, ...signal });
  let conditions: Condition[] | undefined;
  await waitUntil(
    async () => {
      conditions = (await client.get<CrdStatus>(crd, signal)).status?.conditions;
      return findCondition(conditions, 'Established')?.status === 'True';
    },
    () => `CustomResourceDefinition ${name} is not Established (its conditions: ${JSON.stringify(conditions ?? [])})`,
    options,
  );
}

/**
 * Deletes the CRD (an object, or `defineCustomResource`'s; by its name) and waits until it is gone: the API server
 * deletes every object of its kind first. Nothing to do when it is not
 * there. Fails when `timeout` passes first, naming the CRD's conditions
 * (a custom resource whose finalizer nothing removes holds it forever).
 */
export async function uninstallCrd(client: KubeClient, source: CrdSource, options: CrdWaitOptions = {}): Promise<void> {
  const crd = crdOf(source);
  const signal = options.signal === undefined ? {} : { signal: options.signal };
  const name = crd.metadata.name ?? '';
  const target = { apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', name };
  if ((await client.remove(target, signal)).result === 'absent') return;
  let conditions: Condition[] | undefined;
  await waitUntil(
    async () => {
      try {
        conditions = (await client.get<CrdStatus>(target, signal)).status?.conditions;
        return false;
      } catch (err) {
        if (isNotFound(err)) return true;
        throw err;
      }
    },
    () => `CustomResourceDefinition ${name} is not gone (its conditions: ${JSON.stringify(conditions ?? [])})`,
    options,
  );
}
