import type { TimelineEntry } from './timeline.js';

/** What a Secret's values read as in a recording made with redaction (the default), and always in the live view. */
export const redacted = '(redacted)';

// kubectl keeps the whole applied object, data included, in this annotation.
const lastApplied = 'kubectl.kubernetes.io/last-applied-configuration';

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function redactValues(values: unknown): unknown {
  if (!isObject(values)) return values;
  return Object.fromEntries(Object.keys(values).map((key) => [key, redacted]));
}

function redactSecret(secret: Json): Json {
  const copy: Json = { ...secret };
  if ('data' in copy) copy.data = redactValues(copy.data);
  if ('stringData' in copy) copy.stringData = redactValues(copy.stringData);
  const metadata = copy.metadata;
  if (isObject(metadata) && isObject(metadata.annotations) && lastApplied in metadata.annotations) {
    copy.metadata = { ...metadata, annotations: { ...metadata.annotations, [lastApplied]: redacted } };
  }
  return copy;
}

/**
 * A copy of `value` with every Secret's values replaced: a Secret itself
 * (`kind: Secret`, or any object when `secret` says the resource is
 * Secrets), the items of a list of them (whose items carry no kind), each
 * item of an array (what `ctx.client.list` answers) and the `object` of a
 * `{ result, object }` answer (`createOrUpdate`, `updateStatus`,
 * `remove`). The keys stay, so that a reconcile that checks which keys
 * exist replays alike. Anything else comes back as it is, not copied.
 */
export function redactSecrets(value: unknown, secret = false): unknown {
  if (Array.isArray(value)) {
    const items = value.map((item) => redactSecrets(item, secret));
    return items.some((item, i) => item !== value[i]) ? items : value;
  }
  if (!isObject(value)) return value;
  if (value.kind === 'Secret' || (secret && value.kind === undefined && !isResultWrapper(value))) return redactSecret(value);
  if (Array.isArray(value.items) && (value.kind === 'SecretList' || secret)) {
    return { ...value, items: value.items.map((item) => redactSecrets(item, true)) };
  }
  if (isResultWrapper(value) && value.object !== undefined) {
    const object = redactSecrets(value.object, secret);
    return object === value.object ? value : { ...value, object };
  }
  return value;
}

// The answer of the client's read-modify-write and delete calls wraps the object: `{ result: 'updated', object }`.
function isResultWrapper(value: Json): boolean {
  return typeof value.result === 'string' && value.kind === undefined && value.metadata === undefined && Object.keys(value).every((key) => key === 'result' || key === 'object');
}

/** Whether a store or request names Secrets: an informer names its resource by plural (`secrets`), a request entry by kind (`Secret`, as timelineClient's `addressed` spells the core group). */
export function isSecretResource(resource: string): boolean {
  return resource === 'secrets' || resource.startsWith('secrets/') || resource === 'Secret';
}

/** The entry as a recording made with redaction keeps it: informer objects and request answers that are Secrets lose their values. */
export function redactEntry(entry: TimelineEntry): TimelineEntry {
  if (entry.type === 'informer' && entry.object !== undefined) {
    const object = redactSecrets(entry.object, isSecretResource(entry.resource));
    return object === entry.object ? entry : ({ ...entry, object } as TimelineEntry);
  }
  if (entry.type === 'write' && entry.body !== undefined) {
    const body = redactSecrets(entry.body, isSecretResource(entry.resource));
    return body === entry.body ? entry : { ...entry, body };
  }
  return entry;
}
