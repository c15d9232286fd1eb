import type { TimelineEntry } from '../../timeline.js';

/** What a Secret's values read as in a recording made with redaction (the default). */
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
 * `secrets`), and the items of a list of them (whose items carry no kind).
 * The keys stay, so that a reconcile that checks which keys exist replays
 * alike. Anything else comes back as it is, not copied.
 */
export function redactSecrets(value: unknown, secret = false): unknown {
  if (!isObject(value)) return value;
  if (value.kind === 'Secret' || (secret && value.kind === undefined)) return redactSecret(value);
  if (Array.isArray(value.items) && (value.kind === 'SecretList' || secret)) {
    return { ...value, items: value.items.map((item) => redactSecrets(item, true)) };
  }
  return value;
}

function isSecretResource(resource: string): boolean {
  return resource === 'secrets' || resource.startsWith('secrets/');
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
