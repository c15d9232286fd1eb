import type { RecordedOptions, RecordedResource } from '../observe/recording/format.js';
import type { KubeObject } from '../types.js';
import type { ControllerOptions, WatchedResource } from './controller.js';
import { DEFAULT_OWN_WRITE_TIMEOUT, readYourWritesOption } from './readYourWrites.js';

function recordedResource(r: WatchedResource): RecordedResource {
  return {
    ...(r.group !== undefined ? { group: r.group } : {}),
    version: r.version,
    resource: r.resource,
    kind: r.kind,
    ...(r.namespace !== undefined ? { namespace: r.namespace } : {}),
    ...(r.labelSelector !== undefined ? { labelSelector: r.labelSelector } : {}),
    ...(r.fieldSelector !== undefined ? { fieldSelector: r.fieldSelector } : {}),
    ...(r.metadataOnly !== undefined ? { metadataOnly: r.metadataOnly } : {}),
  };
}

/**
 * What a recording keeps of a controller's options: the data replay needs,
 * none of the functions. Made here, where the options and their defaults
 * are known, so that the recorder reads the controller only through it.
 */
export function recordedOptions<T extends KubeObject>(options: ControllerOptions<T>): Omit<RecordedOptions, 'redactSecrets'> {
  return {
    for: recordedResource(options.for),
    owns: (options.owns ?? []).map(recordedResource),
    watches: (options.watches ?? []).map((w) => recordedResource(w.resource)),
    concurrency: options.concurrency ?? 1,
    ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
    ...(options.maxRetries !== undefined ? { maxRetries: options.maxRetries } : {}),
    ...(options.resyncPeriod !== undefined ? { resyncPeriod: options.resyncPeriod } : {}),
    ...recordedReadYourWrites(options.readYourWrites),
  };
}

/** How read-your-own-writes was set, for replay to set it the same way. */
function recordedReadYourWrites(option: ControllerOptions<KubeObject>['readYourWrites']): Pick<RecordedOptions, 'readYourWrites'> {
  const on = readYourWritesOption(option);
  if (on === undefined) return {};
  const timeout = on.timeout ?? DEFAULT_OWN_WRITE_TIMEOUT;
  return { readYourWrites: Number.isFinite(timeout) ? { timeout } : {} };
}
