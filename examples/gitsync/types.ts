import type { Condition, KubeObject, WatchedResource } from 'rxkube';

export const GROUP = 'gitsync.rxkube.dev';
export const API_VERSION = `${GROUP}/v1`;
export const KIND = 'Application';

/**
 * The inventory label: set on every object an Application applies, to the
 * Application's name (objects live in the Application's namespace, so the
 * name is enough). Prune lists by it, so an object without it, or with
 * another Application's name, is never deleted; and an existing object
 * without it is never taken over.
 */
export const INVENTORY_LABEL = `${GROUP}/application`;

/** The Application's spec: which folder of which repository, at which revision. */
export interface ApplicationSpec {
  /** A path on the controller's machine (work tree or bare repository), or an http(s) URL. */
  repoURL: string;
  /** Branch, tag or commit (full or abbreviated); default `HEAD`. */
  revision?: string;
  /** The folder inside the repository; default `.`. */
  path?: string;
  /** Also read the folders under `path` (default false). */
  recurse?: boolean;
  /** Delete what this Application applied and the repository no longer holds (default true). */
  prune?: boolean;
  /** Seconds between reads of the repository (default 180). */
  pollIntervalSeconds?: number;
}

/** `Synced`: every manifest of the revision is applied as it is; `OutOfSync`: not (yet); `Unknown`: the revision could not be read. */
export type SyncStatus = 'Synced' | 'OutOfSync' | 'Unknown';

/** `Healthy`, `Progressing` (a Deployment rolling out), `Degraded` (failed), `Missing` (not applied). */
export type Health = 'Healthy' | 'Progressing' | 'Degraded' | 'Missing';

/** One object of the revision, and how applying it went. */
export interface ResourceStatus {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  /** The file it came from, relative to the repository's root. */
  file: string;
  /** `Synced` once applied, `Failed` when the server refused it, `OutOfSync` when held back. */
  status: 'Synced' | 'Failed' | 'OutOfSync';
  health: Health;
  message?: string;
}

/** A file, or a document in it, that is no manifest this controller can apply. */
export interface ManifestError {
  file: string;
  message: string;
}

export interface ApplicationStatus {
  observedGeneration?: number;
  /** The worst health of its objects; `Degraded` when the revision could not be read. */
  health?: Health;
  sync?: { status: SyncStatus; revision?: string; message?: string };
  resources?: ResourceStatus[];
  errors?: ManifestError[];
  conditions?: Condition[];
}

export interface Application extends KubeObject {
  spec: ApplicationSpec;
  status?: ApplicationStatus;
}

/** Applications, in one namespace or all of them. */
export function applications(namespace?: string): WatchedResource {
  return { group: GROUP, version: 'v1', resource: 'applications', kind: KIND, ...(namespace !== undefined ? { namespace } : {}) };
}

/**
 * The kinds whose hand-made changes are corrected at once, not only at the
 * next poll: watched with the inventory label as selector, so only what
 * Applications applied is cached. Other kinds are corrected at the poll.
 */
export function trackedKinds(namespace?: string): WatchedResource[] {
  const scoped = namespace !== undefined ? { namespace } : {};
  return [
    { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', labelSelector: INVENTORY_LABEL, ...scoped },
    { group: '', version: 'v1', resource: 'services', kind: 'Service', labelSelector: INVENTORY_LABEL, ...scoped },
    { group: 'apps', version: 'v1', resource: 'deployments', kind: 'Deployment', labelSelector: INVENTORY_LABEL, ...scoped },
  ];
}

/** The seconds between polls, as the spec asks or the default. */
export function pollIntervalSeconds(app: Application): number {
  const seconds = app.spec.pollIntervalSeconds;
  return typeof seconds === 'number' && Number.isFinite(seconds) && seconds >= 1 ? seconds : 180;
}
