import { kubeTime } from '../../util/time.js';
import { setMember } from '../../util/json.js';
import { ApiError } from '../api/statusError.js';

/**
 * Reading Kubernetes protobuf request bodies
 * (`application/vnd.kubernetes.protobuf`), which kubectl sends for
 * built-in objects it builds itself (`kubectl create namespace`,
 * `create configmap`, `create secret`, `create deployment`, `create
 * service`, `create job`, `create cronjob`, `create serviceaccount`,
 * `create quota`, `create role`/`rolebinding`/`clusterrole`/`clusterrolebinding`,
 * `create poddisruptionbudget`, `create ingress`, `run`). The envelope is the magic `k8s\0` and a
 * `runtime.Unknown` (type meta, raw bytes); the raw bytes are the typed
 * message, read here with field tables for the kinds above (the field
 * numbers of k8s.io/api's generated.proto). A field this reader does not
 * know, if it carries anything, is a 415 naming it, never silently dropped.
 * Responses are always JSON, which kubectl accepts too.
 */

type Scalar = 'string' | 'int' | 'bool' | 'bytes' | 'time' | 'quantity' | 'intOrString' | 'ignore';

interface Field {
  name: string;
  type: Scalar | MessageSpec;
  repeated?: boolean;
  /** A map<string, V>: repeated entries {1: key, 2: value}. */
  map?: Scalar;
  /** Go pointer fields keep an explicit zero or false (kube's JSON shows them); others omit it. */
  keepZero?: boolean;
  /** An embedded Go struct (`json:",inline"`): its fields are the parent's in JSON. */
  inline?: boolean;
}

type MessageSpec = { readonly [field: number]: Field };

const ownerReference: MessageSpec = {
  1: { name: 'kind', type: 'string' },
  3: { name: 'name', type: 'string' },
  4: { name: 'uid', type: 'string' },
  5: { name: 'apiVersion', type: 'string' },
  6: { name: 'controller', type: 'bool', keepZero: true },
  7: { name: 'blockOwnerDeletion', type: 'bool', keepZero: true },
};

const objectMeta: MessageSpec = {
  1: { name: 'name', type: 'string' },
  2: { name: 'generateName', type: 'string' },
  3: { name: 'namespace', type: 'string' },
  4: { name: 'selfLink', type: 'string' },
  5: { name: 'uid', type: 'string' },
  6: { name: 'resourceVersion', type: 'string' },
  7: { name: 'generation', type: 'int' },
  8: { name: 'creationTimestamp', type: 'time' },
  9: { name: 'deletionTimestamp', type: 'time' },
  10: { name: 'deletionGracePeriodSeconds', type: 'int', keepZero: true },
  11: { name: 'labels', type: 'string', map: 'string' },
  12: { name: 'annotations', type: 'string', map: 'string' },
  13: { name: 'ownerReferences', type: ownerReference, repeated: true },
  14: { name: 'finalizers', type: 'string', repeated: true },
  17: { name: 'managedFields', type: 'ignore', repeated: true },
};

const labelSelector: MessageSpec = {
  1: { name: 'matchLabels', type: 'string', map: 'string' },
  2: {
    name: 'matchExpressions',
    repeated: true,
    type: { 1: { name: 'key', type: 'string' }, 2: { name: 'operator', type: 'string' }, 3: { name: 'values', type: 'string', repeated: true } },
  },
};

const container: MessageSpec = {
  1: { name: 'name', type: 'string' },
  2: { name: 'image', type: 'string' },
  3: { name: 'command', type: 'string', repeated: true },
  4: { name: 'args', type: 'string', repeated: true },
  5: { name: 'workingDir', type: 'string' },
  6: {
    name: 'ports',
    repeated: true,
    type: {
      1: { name: 'name', type: 'string' },
      2: { name: 'hostPort', type: 'int' },
      3: { name: 'containerPort', type: 'int' },
      4: { name: 'protocol', type: 'string' },
      5: { name: 'hostIP', type: 'string' },
    },
  },
  7: { name: 'env', repeated: true, type: { 1: { name: 'name', type: 'string' }, 2: { name: 'value', type: 'string' } } },
  8: { name: 'resources', type: { 1: { name: 'limits', type: 'string', map: 'quantity' }, 2: { name: 'requests', type: 'string', map: 'quantity' } } },
  13: { name: 'terminationMessagePath', type: 'string' },
  14: { name: 'imagePullPolicy', type: 'string' },
  16: { name: 'stdin', type: 'bool' },
  17: { name: 'stdinOnce', type: 'bool' },
  18: { name: 'tty', type: 'bool' },
  20: { name: 'terminationMessagePolicy', type: 'string' },
};

const podSpec: MessageSpec = {
  2: { name: 'containers', type: container, repeated: true },
  3: { name: 'restartPolicy', type: 'string' },
  4: { name: 'terminationGracePeriodSeconds', type: 'int', keepZero: true },
  5: { name: 'activeDeadlineSeconds', type: 'int', keepZero: true },
  6: { name: 'dnsPolicy', type: 'string' },
  7: { name: 'nodeSelector', type: 'string', map: 'string' },
  8: { name: 'serviceAccountName', type: 'string' },
  9: { name: 'serviceAccount', type: 'string' },
  10: { name: 'nodeName', type: 'string' },
  11: { name: 'hostNetwork', type: 'bool' },
  16: { name: 'hostname', type: 'string' },
  17: { name: 'subdomain', type: 'string' },
  19: { name: 'schedulerName', type: 'string' },
  20: { name: 'initContainers', type: container, repeated: true },
  25: { name: 'priority', type: 'int', keepZero: true },
  30: { name: 'enableServiceLinks', type: 'bool', keepZero: true },
};

const podTemplateSpec: MessageSpec = { 1: { name: 'metadata', type: objectMeta }, 2: { name: 'spec', type: podSpec } };

const jobSpec: MessageSpec = {
  1: { name: 'parallelism', type: 'int', keepZero: true },
  2: { name: 'completions', type: 'int', keepZero: true },
  3: { name: 'activeDeadlineSeconds', type: 'int', keepZero: true },
  4: { name: 'selector', type: labelSelector },
  5: { name: 'manualSelector', type: 'bool', keepZero: true },
  6: { name: 'template', type: podTemplateSpec },
  7: { name: 'backoffLimit', type: 'int', keepZero: true },
  8: { name: 'ttlSecondsAfterFinished', type: 'int', keepZero: true },
  9: { name: 'completionMode', type: 'string' },
  10: { name: 'suspend', type: 'bool', keepZero: true },
  12: { name: 'backoffLimitPerIndex', type: 'int', keepZero: true },
  13: { name: 'maxFailedIndexes', type: 'int', keepZero: true },
  14: { name: 'podReplacementPolicy', type: 'string' },
  15: { name: 'managedBy', type: 'string' },
};

const ingressBackend: MessageSpec = {
  4: {
    name: 'service',
    type: {
      1: { name: 'name', type: 'string' },
      2: { name: 'port', type: { 1: { name: 'name', type: 'string' }, 2: { name: 'number', type: 'int' } } },
    },
  },
  3: { name: 'resource', type: { 1: { name: 'apiGroup', type: 'string' }, 2: { name: 'kind', type: 'string' }, 3: { name: 'name', type: 'string' } } },
};

const ingressSpec: MessageSpec = {
  1: { name: 'defaultBackend', type: ingressBackend },
  2: { name: 'tls', repeated: true, type: { 1: { name: 'hosts', type: 'string', repeated: true }, 2: { name: 'secretName', type: 'string' } } },
  3: {
    name: 'rules',
    repeated: true,
    type: {
      1: { name: 'host', type: 'string' },
      2: {
        name: 'ingressRuleValue',
        inline: true,
        type: {
          1: {
            name: 'http',
            type: {
              1: {
                name: 'paths',
                repeated: true,
                type: { 1: { name: 'path', type: 'string' }, 2: { name: 'backend', type: ingressBackend }, 3: { name: 'pathType', type: 'string' } },
              },
            },
          },
        },
      },
    },
  },
  4: { name: 'ingressClassName', type: 'string' },
};

const intOrStringPair: MessageSpec = { 1: { name: 'maxUnavailable', type: 'intOrString' }, 2: { name: 'maxSurge', type: 'intOrString' } };

// What RBAC's kubectl commands build (create serviceaccount/role/rolebinding/clusterrole/clusterrolebinding/token, auth can-i).
const policyRule: MessageSpec = {
  1: { name: 'verbs', type: 'string', repeated: true },
  2: { name: 'apiGroups', type: 'string', repeated: true },
  3: { name: 'resources', type: 'string', repeated: true },
  4: { name: 'resourceNames', type: 'string', repeated: true },
  5: { name: 'nonResourceURLs', type: 'string', repeated: true },
};

const binding: MessageSpec = {
  1: { name: 'metadata', type: objectMeta },
  2: {
    name: 'subjects',
    repeated: true,
    type: strings('kind', 'apiGroup', 'name', 'namespace'),
  },
  3: { name: 'roleRef', type: strings('apiGroup', 'kind', 'name') },
};

/** A message of string fields numbered from 1, in order. */
function strings(...names: string[]): MessageSpec {
  return Object.fromEntries(names.map((name, i) => [i + 1, { name, type: 'string' }]));
}

const resourceAttributes = strings('namespace', 'verb', 'group', 'version', 'resource', 'subresource', 'name');

const accessReviewAttributes: MessageSpec = {
  1: { name: 'resourceAttributes', type: resourceAttributes },
  2: { name: 'nonResourceAttributes', type: strings('path', 'verb') },
};

const subjectAccessReview: MessageSpec = {
  1: { name: 'metadata', type: objectMeta },
  2: { name: 'spec', type: { ...accessReviewAttributes, 3: { name: 'user', type: 'string' }, 4: { name: 'groups', type: 'string', repeated: true }, 6: { name: 'uid', type: 'string' } } },
  3: { name: 'status', type: 'ignore' },
};

const rbacKinds: Readonly<Record<string, MessageSpec>> = {
  'v1/ServiceAccount': {
    1: { name: 'metadata', type: objectMeta },
    3: { name: 'imagePullSecrets', repeated: true, type: { 1: { name: 'name', type: 'string' } } },
    4: { name: 'automountServiceAccountToken', type: 'bool', keepZero: true },
  },
  'authentication.k8s.io/v1/TokenRequest': {
    1: { name: 'metadata', type: objectMeta },
    2: { name: 'spec', type: { 1: { name: 'audiences', type: 'string', repeated: true }, 4: { name: 'expirationSeconds', type: 'int', keepZero: true } } },
    3: { name: 'status', type: 'ignore' },
  },
  'rbac.authorization.k8s.io/v1/Role': { 1: { name: 'metadata', type: objectMeta }, 2: { name: 'rules', type: policyRule, repeated: true } },
  'rbac.authorization.k8s.io/v1/ClusterRole': {
    1: { name: 'metadata', type: objectMeta },
    2: { name: 'rules', type: policyRule, repeated: true },
    3: { name: 'aggregationRule', type: { 1: { name: 'clusterRoleSelectors', type: labelSelector, repeated: true } } },
  },
  'rbac.authorization.k8s.io/v1/RoleBinding': binding,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': binding,
  'authentication.k8s.io/v1/SelfSubjectReview': { 1: { name: 'metadata', type: objectMeta }, 2: { name: 'status', type: 'ignore' } },
  'authentication.k8s.io/v1/TokenReview': {
    1: { name: 'metadata', type: objectMeta },
    2: { name: 'spec', type: { 1: { name: 'token', type: 'string' }, 2: { name: 'audiences', type: 'string', repeated: true } } },
    3: { name: 'status', type: 'ignore' },
  },
  'authorization.k8s.io/v1/SelfSubjectAccessReview': { 1: { name: 'metadata', type: objectMeta }, 2: { name: 'spec', type: accessReviewAttributes }, 3: { name: 'status', type: 'ignore' } },
  'authorization.k8s.io/v1/SubjectAccessReview': subjectAccessReview,
  'authorization.k8s.io/v1/LocalSubjectAccessReview': subjectAccessReview,
  'authorization.k8s.io/v1/SelfSubjectRulesReview': { 1: { name: 'metadata', type: objectMeta }, 2: { name: 'spec', type: { 1: { name: 'namespace', type: 'string' } } }, 3: { name: 'status', type: 'ignore' } },
};

/** The readable kinds, by `apiVersion/kind`. Status is ignored: the server sets it on create. */
const kinds: Readonly<Record<string, MessageSpec>> = {
  ...rbacKinds,
  'v1/ServiceAccount': {
    1: { name: 'metadata', type: objectMeta },
    2: { name: 'secrets', repeated: true, type: { 1: { name: 'kind', type: 'string' }, 2: { name: 'namespace', type: 'string' }, 3: { name: 'name', type: 'string' } } },
    3: { name: 'imagePullSecrets', repeated: true, type: { 1: { name: 'name', type: 'string' } } },
    4: { name: 'automountServiceAccountToken', type: 'bool', keepZero: true },
  },
  'v1/ResourceQuota': {
    1: { name: 'metadata', type: objectMeta },
    2: {
      name: 'spec',
      type: {
        1: { name: 'hard', type: 'string', map: 'quantity' },
        2: { name: 'scopes', type: 'string', repeated: true },
        3: {
          name: 'scopeSelector',
          type: {
            1: {
              name: 'matchExpressions',
              repeated: true,
              type: { 1: { name: 'scopeName', type: 'string' }, 2: { name: 'operator', type: 'string' }, 3: { name: 'values', type: 'string', repeated: true } },
            },
          },
        },
      },
    },
    3: { name: 'status', type: 'ignore' },
  },
  'batch/v1/Job': { 1: { name: 'metadata', type: objectMeta }, 2: { name: 'spec', type: jobSpec }, 3: { name: 'status', type: 'ignore' } },
  'batch/v1/CronJob': {
    1: { name: 'metadata', type: objectMeta },
    2: {
      name: 'spec',
      type: {
        1: { name: 'schedule', type: 'string' },
        2: { name: 'startingDeadlineSeconds', type: 'int', keepZero: true },
        3: { name: 'concurrencyPolicy', type: 'string' },
        4: { name: 'suspend', type: 'bool', keepZero: true },
        5: { name: 'jobTemplate', type: { 1: { name: 'metadata', type: objectMeta }, 2: { name: 'spec', type: jobSpec } } },
        6: { name: 'successfulJobsHistoryLimit', type: 'int', keepZero: true },
        7: { name: 'failedJobsHistoryLimit', type: 'int', keepZero: true },
        8: { name: 'timeZone', type: 'string' },
      },
    },
    3: { name: 'status', type: 'ignore' },
  },
  'policy/v1/PodDisruptionBudget': {
    1: { name: 'metadata', type: objectMeta },
    2: {
      name: 'spec',
      type: {
        1: { name: 'minAvailable', type: 'intOrString' },
        2: { name: 'selector', type: labelSelector },
        3: { name: 'maxUnavailable', type: 'intOrString' },
        4: { name: 'unhealthyPodEvictionPolicy', type: 'string' },
      },
    },
    3: { name: 'status', type: 'ignore' },
  },
  'networking.k8s.io/v1/Ingress': { 1: { name: 'metadata', type: objectMeta }, 2: { name: 'spec', type: ingressSpec }, 3: { name: 'status', type: 'ignore' } },
  'v1/Namespace': {
    1: { name: 'metadata', type: objectMeta },
    2: { name: 'spec', type: { 1: { name: 'finalizers', type: 'string', repeated: true } } },
    3: { name: 'status', type: 'ignore' },
  },
  'v1/ConfigMap': {
    1: { name: 'metadata', type: objectMeta },
    2: { name: 'data', type: 'string', map: 'string' },
    3: { name: 'binaryData', type: 'string', map: 'bytes' },
    4: { name: 'immutable', type: 'bool', keepZero: true },
  },
  'v1/Secret': {
    1: { name: 'metadata', type: objectMeta },
    2: { name: 'data', type: 'string', map: 'bytes' },
    3: { name: 'type', type: 'string' },
    4: { name: 'stringData', type: 'string', map: 'string' },
    5: { name: 'immutable', type: 'bool', keepZero: true },
  },
  'v1/Pod': { 1: { name: 'metadata', type: objectMeta }, 2: { name: 'spec', type: podSpec }, 3: { name: 'status', type: 'ignore' } },
  'v1/Service': {
    1: { name: 'metadata', type: objectMeta },
    2: {
      name: 'spec',
      type: {
        1: {
          name: 'ports',
          repeated: true,
          type: {
            1: { name: 'name', type: 'string' },
            2: { name: 'protocol', type: 'string' },
            3: { name: 'port', type: 'int' },
            4: { name: 'targetPort', type: 'intOrString' },
            5: { name: 'nodePort', type: 'int' },
            6: { name: 'appProtocol', type: 'string' },
          },
        },
        2: { name: 'selector', type: 'string', map: 'string' },
        3: { name: 'clusterIP', type: 'string' },
        4: { name: 'type', type: 'string' },
        5: { name: 'externalIPs', type: 'string', repeated: true },
        7: { name: 'sessionAffinity', type: 'string' },
        10: { name: 'externalName', type: 'string' },
        11: { name: 'externalTrafficPolicy', type: 'string' },
        17: { name: 'ipFamilyPolicy', type: 'string' },
        18: { name: 'clusterIPs', type: 'string', repeated: true },
        19: { name: 'ipFamilies', type: 'string', repeated: true },
        22: { name: 'internalTrafficPolicy', type: 'string' },
      },
    },
    3: { name: 'status', type: 'ignore' },
  },
  'apps/v1/Deployment': {
    1: { name: 'metadata', type: objectMeta },
    2: {
      name: 'spec',
      type: {
        1: { name: 'replicas', type: 'int', keepZero: true },
        2: { name: 'selector', type: labelSelector },
        3: { name: 'template', type: podTemplateSpec },
        4: { name: 'strategy', type: { 1: { name: 'type', type: 'string' }, 2: { name: 'rollingUpdate', type: intOrStringPair } } },
        5: { name: 'minReadySeconds', type: 'int' },
        6: { name: 'revisionHistoryLimit', type: 'int', keepZero: true },
        7: { name: 'paused', type: 'bool' },
        9: { name: 'progressDeadlineSeconds', type: 'int', keepZero: true },
      },
    },
    3: { name: 'status', type: 'ignore' },
  },
};

const magic = Buffer.from('k8s\u0000', 'latin1');

function unsupported(message: string): ApiError {
  return new ApiError(415, 'UnsupportedMediaType', `the protobuf body cannot be read: ${message}; send the object as JSON or YAML instead (e.g. kubectl create -f)`);
}

/** A cursor over protobuf wire format. */
class Reader {
  pos = 0;
  constructor(readonly buf: Buffer, readonly end = buf.length) {}

  get done(): boolean {
    return this.pos >= this.end;
  }

  varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.end) throw unsupported('truncated varint');
      const byte = this.buf[this.pos++];
      result |= BigInt(byte & 0x7f) << shift;
      if ((byte & 0x80) === 0) return result;
      shift += 7n;
      if (shift > 63n) throw unsupported('varint too long');
    }
  }

  bytes(): Buffer {
    const length = Number(this.varint());
    if (this.pos + length > this.end) throw unsupported('truncated field');
    const out = this.buf.subarray(this.pos, this.pos + length);
    this.pos += length;
    return out;
  }

  /** Skips a field; returns whether it carried anything (non-zero, non-empty). */
  skip(wireType: number): boolean {
    switch (wireType) {
      case 0:
        return this.varint() !== 0n;
      case 1:
        this.pos += 8;
        return true;
      case 2:
        return this.bytes().length > 0;
      case 5:
        this.pos += 4;
        return true;
      default:
        throw unsupported(`wire type ${wireType}`);
    }
  }
}

function signed64(value: bigint): number {
  return Number(BigInt.asIntN(64, value));
}

function scalar(type: Scalar, wireType: number, reader: Reader, path: string): unknown {
  switch (type) {
    case 'string':
      return reader.bytes().toString('utf8');
    case 'bytes':
      return reader.bytes().toString('base64');
    case 'int':
      return signed64(reader.varint());
    case 'bool':
      return reader.varint() !== 0n;
    case 'quantity':
      return (decodeMessage(reader.bytes(), { 1: { name: 'string', type: 'string' } }, path) as { string?: string }).string ?? '0';
    case 'time': {
      const time = decodeMessage(reader.bytes(), { 1: { name: 's', type: 'int' }, 2: { name: 'n', type: 'int' } }, path) as { s?: number };
      return time.s === undefined ? undefined : kubeTime(time.s * 1000);
    }
    case 'intOrString': {
      const v = decodeMessage(reader.bytes(), { 1: { name: 'type', type: 'int' }, 2: { name: 'int', type: 'int' }, 3: { name: 'str', type: 'string' } }, path) as {
        type?: number;
        int?: number;
        str?: string;
      };
      return v.type === 1 ? (v.str ?? '') : (v.int ?? 0);
    }
    case 'ignore':
      reader.skip(wireType);
      return undefined;
  }
}

function isEmpty(value: unknown, field: Field): boolean {
  if (value === undefined || value === '') return true;
  if (!field.keepZero && (value === 0 || value === false)) return true;
  return false;
}

function decodeMessage(buf: Buffer, spec: MessageSpec, path: string): Record<string, unknown> {
  const reader = new Reader(buf);
  const out: Record<string, unknown> = {};
  while (!reader.done) {
    const key = Number(reader.varint());
    const number = key >>> 3;
    const wireType = key & 7;
    const field = spec[number];
    if (field === undefined) {
      if (reader.skip(wireType)) throw unsupported(`field ${number} of ${path || 'the object'} is not supported by this server`);
      continue;
    }
    const fieldPath = path === '' ? field.name : `${path}.${field.name}`;
    if (field.map !== undefined) {
      const entry = decodeMessage(reader.bytes(), { 1: { name: 'k', type: 'string' }, 2: { name: 'v', type: field.map } }, fieldPath);
      const map = (out[field.name] ??= {}) as Record<string, unknown>;
      // A map's key is data: a ConfigMap's may be `__proto__`.
      setMember(map, String(entry.k ?? ''), entry.v ?? (field.map === 'quantity' ? '0' : ''));
      continue;
    }
    const value = typeof field.type === 'string' ? scalar(field.type, wireType, reader, fieldPath) : decodeMessage(reader.bytes(), field.type, fieldPath);
    if (field.inline) {
      Object.assign(out, value);
    } else if (field.repeated) {
      if (value !== undefined) ((out[field.name] ??= []) as unknown[]).push(value);
    } else if (!isEmpty(value, field)) {
      out[field.name] = value;
    }
  }
  return out;
}

export const protobufMediaType = 'application/vnd.kubernetes.protobuf';

/** Decodes a Kubernetes protobuf request body into the JSON object it stands for (415 when it cannot be read). */
export function decodeProtobufObject(body: Buffer): Record<string, unknown> {
  if (body.length < magic.length || !body.subarray(0, magic.length).equals(magic)) throw unsupported('it does not start with the k8s protobuf magic');
  const envelope = new Reader(body.subarray(magic.length));
  let apiVersion = '';
  let kind = '';
  let raw: Buffer | undefined;
  while (!envelope.done) {
    const key = Number(envelope.varint());
    const number = key >>> 3;
    if (number === 1) {
      const typeMeta = decodeMessage(envelope.bytes(), { 1: { name: 'apiVersion', type: 'string' }, 2: { name: 'kind', type: 'string' } }, 'typeMeta');
      apiVersion = String(typeMeta.apiVersion ?? '');
      kind = String(typeMeta.kind ?? '');
    } else if (number === 2) raw = envelope.bytes();
    else if (number === 3) {
      const encoding = envelope.bytes().toString('utf8');
      if (encoding !== '') throw unsupported(`content encoding ${encoding}`);
    } else envelope.skip(key & 7);
  }
  const spec = kinds[`${apiVersion}/${kind}`];
  if (spec === undefined) {
    throw unsupported(`${kind || 'this kind'} (${apiVersion}) is not one of the kinds it reads (${Object.keys(kinds).join(', ')})`);
  }
  return { apiVersion, kind, ...decodeMessage(raw ?? Buffer.alloc(0), spec, '') };
}
