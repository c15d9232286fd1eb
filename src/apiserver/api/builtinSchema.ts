import type { GroupKind } from './groupKind.js';

/**
 * The part of the built-in kinds' schemas that patches and field ownership need: which lists
 * merge (and by which keys), which maps and lists are atomic. Taken from the `patchStrategy` /
 * `patchMergeKey` tags and the `+listType` / `+listMapKey` / `+mapType` / `+structType` markers
 * of k8s.io/api 1.32 for the kinds the embedded server serves.
 *
 * Strategic merge and server-side apply read different tags and so may disagree: Service
 * `spec.ports` merges by `port` in a strategic merge patch but is keyed by `port` and `protocol`
 * in apply; a Pod's `status.hostIPs` merges by `ip` in a patch but is atomic in apply.
 * Anything not described is, for patches, an object merged key by key and a list replaced whole;
 * for apply, a granular object and an atomic list.
 */
export interface Shape {
  /** Known fields of an object; a field not listed takes `values`, else has no shape. */
  readonly fields?: Readonly<Record<string, Shape>>;
  /** The shape of every value of a map (e.g. `labels`) or every item of a list. */
  readonly values?: Shape;
  /** Present on lists: how they merge. */
  readonly list?: ListShape;
  /** `+structType=atomic` / `+mapType=atomic`: apply owns and replaces the object as a whole. */
  readonly atomic?: boolean;
}

export interface ListShape {
  /** `patchStrategy:"merge"`: a strategic merge patch merges this list instead of replacing it. */
  readonly patchMerge?: boolean;
  /** `patchMergeKey`: the key a strategic merge patch matches items by (lists of objects only). */
  readonly patchMergeKey?: string;
  /** `+listType` for apply: `atomic` (the default), `set` of scalars, or `map` keyed by `keys`. */
  readonly type: 'atomic' | 'set' | 'map';
  /** `+listMapKey`s, in order: they name an item in managedFields (`k:{"name":"x"}`). */
  readonly keys?: readonly string[];
  /** Defaults of key fields an item may leave out (`protocol: TCP` for ports). */
  readonly keyDefaults?: Readonly<Record<string, string | number>>;
}

const atomic: Shape = { atomic: true };
const atomicList: Shape = { list: { type: 'atomic' } };

function mapList(key: string, item: Shape = {}, more: Partial<ListShape> = {}): Shape {
  return { values: item, list: { patchMerge: true, patchMergeKey: key, type: 'map', keys: [key], ...more } };
}

const conditions = mapList('type');

export const objectMetaShape: Shape = {
  fields: {
    labels: { values: {} },
    annotations: { values: {} },
    finalizers: { list: { patchMerge: true, type: 'set' } },
    ownerReferences: mapList('uid'),
    managedFields: atomicList,
  },
};

const ports = mapList('containerPort', {}, { keys: ['containerPort', 'protocol'], keyDefaults: { protocol: 'TCP' } });

const container: Shape = {
  fields: {
    ports,
    env: mapList('name', { fields: { valueFrom: atomic } }),
    volumeMounts: mapList('mountPath'),
    volumeDevices: mapList('devicePath'),
    resources: { fields: { claims: { values: {}, list: { type: 'map', keys: ['name'] } } } },
  },
};

export const podSpecShape: Shape = {
  fields: {
    volumes: mapList('name'),
    initContainers: mapList('name', container),
    containers: mapList('name', container),
    ephemeralContainers: mapList('name', container),
    imagePullSecrets: mapList('name', atomic),
    hostAliases: mapList('ip'),
    topologySpreadConstraints: mapList('topologyKey', {}, { keys: ['topologyKey', 'whenUnsatisfiable'] }),
    schedulingGates: mapList('name'),
    resourceClaims: mapList('name'),
    nodeSelector: atomic,
    affinity: { fields: { nodeAffinity: { fields: { requiredDuringSchedulingIgnoredDuringExecution: atomic } } } },
  },
};

const podStatusShape: Shape = {
  fields: {
    conditions,
    podIPs: mapList('ip'),
    hostIPs: { list: { patchMerge: true, patchMergeKey: 'ip', type: 'atomic' } },
    resourceClaimStatuses: mapList('name'),
  },
};

export const podTemplateSpecShape: Shape = { fields: { metadata: objectMetaShape, spec: podSpecShape } };

const labelSelector = atomic;

function kindShape(fields: Record<string, Shape> = {}): Shape {
  return { fields: { metadata: objectMetaShape, ...fields } };
}

const shapes: Readonly<Record<string, Shape>> = {
  '/Pod': kindShape({ spec: podSpecShape, status: podStatusShape }),
  '/PodTemplate': kindShape({ template: podTemplateSpecShape }),
  '/Service': kindShape({
    spec: {
      fields: {
        ports: mapList('port', {}, { keys: ['port', 'protocol'], keyDefaults: { protocol: 'TCP' } }),
        selector: atomic,
      },
    },
    status: { fields: { conditions } },
  }),
  '/Namespace': kindShape({ status: { fields: { conditions } } }),
  '/Event': kindShape({ involvedObject: atomic, related: atomic }),
  'events.k8s.io/Event': kindShape({ regarding: atomic, related: atomic }),
  'apps/Deployment': kindShape({
    spec: { fields: { selector: labelSelector, template: podTemplateSpecShape } },
    status: { fields: { conditions } },
  }),
  'apps/ReplicaSet': kindShape({
    spec: { fields: { selector: labelSelector, template: podTemplateSpecShape } },
    status: { fields: { conditions } },
  }),
  'apps/StatefulSet': kindShape({
    spec: { fields: { selector: labelSelector, template: podTemplateSpecShape } },
    status: { fields: { conditions } },
  }),
  'apps/DaemonSet': kindShape({
    spec: { fields: { selector: labelSelector, template: podTemplateSpecShape } },
    status: { fields: { conditions } },
  }),
  'batch/Job': kindShape({
    spec: { fields: { selector: labelSelector, template: podTemplateSpecShape } },
    status: { fields: { conditions: { list: { patchMerge: true, patchMergeKey: 'type', type: 'atomic' } } } },
  }),
  'batch/CronJob': kindShape({
    spec: { fields: { jobTemplate: { fields: { metadata: objectMetaShape, spec: { fields: { selector: labelSelector, template: podTemplateSpecShape } } } } } },
  }),
  'apiextensions.k8s.io/CustomResourceDefinition': kindShape({ status: { fields: { conditions } } }),
};

/** The shape of a whole object of this kind; unknown kinds get only `metadata`'s shape. */
export function shapeFor(kind: GroupKind): Shape {
  return shapes[`${kind.group}/${kind.kind}`] ?? kindShape();
}

/** The shape of `key` inside an object or list of shape `shape` (undefined: no shape known). */
export function childShape(shape: Shape | undefined, key: string): Shape | undefined {
  if (shape === undefined) return undefined;
  return shape.fields?.[key] ?? shape.values;
}
