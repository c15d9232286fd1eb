import Type, { type Static } from 'typebox';
import { defineCustomResource, Kube, type ObjectOf, type WatchedResource } from 'rxkube';

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

const health = Type.Union([Type.Literal('Healthy'), Type.Literal('Progressing'), Type.Literal('Degraded'), Type.Literal('Missing')]);
const syncStatus = Type.Union([Type.Literal('Synced'), Type.Literal('OutOfSync'), Type.Literal('Unknown')]);

/** One object of the revision, and how applying it went. */
const resourceStatus = Type.Object({
  apiVersion: Type.String(),
  kind: Type.String(),
  namespace: Type.Optional(Type.String()),
  name: Type.String(),
  file: Type.String({ description: "The file it came from, relative to the repository's root." }),
  status: Type.Union([Type.Literal('Synced'), Type.Literal('Failed'), Type.Literal('OutOfSync')], { description: '`Synced` once applied, `Failed` when the server refused it, `OutOfSync` when held back.' }),
  health,
  message: Type.Optional(Type.String()),
});

/** A file, or a document in it, that is no manifest this controller can apply. */
const manifestError = Type.Object({ file: Type.String(), message: Type.String() });

/**
 * The Application custom resource: keeps the objects of one folder of a Git
 * repository applied in the Application's namespace. Its CRD, its object
 * type and the resource the controller is `for` all come from this one
 * definition.
 */
export const Application = defineCustomResource({
  group: GROUP,
  kind: KIND,
  shortNames: ['gapp'],
  scope: 'Namespaced',
  versions: {
    v1: {
      schema: {
        spec: Type.Object({
          repoURL: Type.String({ minLength: 1, description: "The Git repository, as a path on the controller's machine (a work tree or a bare repository) or an http(s) URL it clones." }),
          revision: Type.Optional(Type.String({ minLength: 1, default: 'HEAD', description: 'A branch, a tag or a commit (full or abbreviated); a branch or tag is followed as it moves, a commit stays put.' })),
          path: Type.Optional(Type.String({ default: '.', description: 'The folder inside the repository whose *.yaml, *.yml and *.json files are the desired state.' })),
          recurse: Type.Optional(Type.Boolean({ default: false, description: 'Also read the folders under path.' })),
          prune: Type.Optional(Type.Boolean({ default: true, description: 'Delete the objects this Application applied that are no longer in the repository.' })),
          pollIntervalSeconds: Type.Optional(Type.Integer({ minimum: 1, default: 180, description: 'How often the repository is read again for new commits (and hand-made drift corrected).' })),
        }),
        status: Type.Object({
          observedGeneration: Type.Optional(Type.Integer()),
          health: Type.Optional(health),
          sync: Type.Optional(Type.Object({ status: syncStatus, revision: Type.Optional(Type.String()), message: Type.Optional(Type.String()) })),
          resources: Type.Optional(Type.Array(resourceStatus)),
          errors: Type.Optional(Type.Array(manifestError)),
          conditions: Type.Optional(Kube.conditions()),
        }),
      },
      printerColumns: [
        { name: 'Sync', type: 'string', jsonPath: '.status.sync.status' },
        { name: 'Health', type: 'string', jsonPath: '.status.health' },
        { name: 'Revision', type: 'string', jsonPath: '.status.sync.revision' },
        { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      ],
    },
  },
});

/** An Application object, as the definition types it. */
export type Application = ObjectOf<typeof Application>;
/** The Application's spec: which folder of which repository, at which revision. */
export type ApplicationSpec = Application['spec'];
export type ApplicationStatus = NonNullable<Application['status']>;
/** `Synced`: every manifest of the revision is applied as it is; `OutOfSync`: not (yet); `Unknown`: the revision could not be read. */
export type SyncStatus = Static<typeof syncStatus>;
/** `Healthy`, `Progressing` (a Deployment rolling out), `Degraded` (failed), `Missing` (not applied). */
export type Health = Static<typeof health>;
export type ResourceStatus = Static<typeof resourceStatus>;
export type ManifestError = Static<typeof manifestError>;

/** Applications, in one namespace or all of them. */
export function applications(namespace?: string): WatchedResource<Application> {
  return { ...Application.resource, ...(namespace !== undefined ? { namespace } : {}) };
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
