/**
 * What a recording must hold for replay to trust it: the header's options
 * shaped as `RecordedOptions`, and each entry of a type replay reads with
 * the members it reads. A recording is data from a file that anyone may
 * have edited; what does not fit is refused (the reader throws a
 * `RecordingError` naming the file and line) rather than skipped, so that a
 * replay never compares against a recording it silently read in part.
 * Entries of types this version does not know are kept, as the timeline's
 * rule says, and skipped by replay.
 */

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const isString = (v: unknown): v is string => typeof v === 'string';
const optional = (v: unknown, check: (v: unknown) => boolean): boolean => v === undefined || check(v);
const positiveInteger = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) > 0;
const nonNegative = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v) && v >= 0;

function resourceProblem(value: unknown, name: string): string | undefined {
  if (!isObject(value)) return `${name} must be a resource ({ group, version, resource, kind }), got ${JSON.stringify(value)}`;
  for (const member of ['version', 'resource', 'kind'] as const) {
    if (!isString(value[member]) || value[member] === '') return `${name}.${member} must be a non-empty string, got ${JSON.stringify(value[member])}`;
  }
  if (!optional(value.group, isString)) return `${name}.group must be a string, got ${JSON.stringify(value.group)}`;
  return undefined;
}

/** What is wrong with a header's options, or undefined. */
export function optionsProblem(options: Json): string | undefined {
  const problem = resourceProblem(options.for, 'options.for');
  if (problem !== undefined) return problem;
  for (const list of ['owns', 'watches'] as const) {
    const items = options[list];
    if (!Array.isArray(items)) return `options.${list} must be an array of resources, got ${JSON.stringify(items)}`;
    for (const [i, item] of items.entries()) {
      const itemProblem = resourceProblem(item, `options.${list}[${i}]`);
      if (itemProblem !== undefined) return itemProblem;
    }
  }
  if (!positiveInteger(options.concurrency)) return `options.concurrency must be a positive integer, got ${JSON.stringify(options.concurrency)}`;
  if (!optional(options.timeout, positiveInteger)) return `options.timeout must be a positive integer (ms), got ${JSON.stringify(options.timeout)}`;
  if (!optional(options.maxRetries, (v) => Number.isSafeInteger(v) && (v as number) >= 0)) return `options.maxRetries must be a non-negative integer, got ${JSON.stringify(options.maxRetries)}`;
  if (!optional(options.resyncPeriod, positiveInteger)) return `options.resyncPeriod must be a positive integer (ms), got ${JSON.stringify(options.resyncPeriod)}`;
  const ryow = options.readYourWrites;
  if (ryow !== undefined && (ryow === null || typeof ryow !== 'object' || Array.isArray(ryow) || !optional((ryow as { timeout?: Json }).timeout, positiveInteger))) {
    return `options.readYourWrites must be an object with an optional positive integer timeout (ms), got ${JSON.stringify(ryow)}`;
  }
  return undefined;
}

const objectEvents: ReadonlySet<unknown> = new Set(['Listed', 'Added', 'Modified', 'Deleted']);

/** The members each entry type replay reads must have, as checks by name. */
const shapes: Record<string, Record<string, (v: unknown) => boolean>> = {
  informer: { resource: isString, event: isString },
  trigger: { key: isString, cause: (v) => isObject(v) && isString(v.via) },
  'run-start': { key: isString, attempt: nonNegative },
  'run-end': { key: isString, result: isString, error: (v) => optional(v, isString) },
  write: { key: isString, verb: isString, resource: isString, code: nonNegative, objectKey: (v) => optional(v, isString) },
  event: { key: isString, eventType: isString, reason: isString, message: isString },
};

/** What is wrong with one entry, or undefined. */
export function entryProblem(entry: Json): string | undefined {
  if (typeof entry.at !== 'number' || !Number.isFinite(entry.at)) return `entry "${String(entry.type)}": at must be a time in ms, got ${JSON.stringify(entry.at)}`;
  const shape = shapes[entry.type as string];
  if (shape === undefined) return undefined;
  for (const [member, check] of Object.entries(shape)) {
    if (!check(entry[member])) return `entry "${String(entry.type)}": ${member} is malformed, got ${JSON.stringify(entry[member])}`;
  }
  if (entry.type === 'informer' && objectEvents.has(entry.event) && entry.object !== undefined) {
    const object = entry.object;
    if (!isObject(object)) return `entry "informer" ${String(entry.event)}: object must be a Kubernetes object, got ${typeof object === 'string' ? 'a string' : JSON.stringify(object)}`;
    if (!isObject(object.metadata) || !isString(object.metadata.name)) return `entry "informer" ${String(entry.event)}: object.metadata must hold a name, got ${JSON.stringify(object.metadata)}`;
  }
  return undefined;
}
