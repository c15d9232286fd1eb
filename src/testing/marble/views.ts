import type { ReconcileOutcome } from '../../operators/reconcileByKey.js';
import type { TriggerEntry } from '../../observe/timeline.js';
import { describeEvent, describeEventFully, type RecordedEvent } from '../memory/memoryRecorder.js';
import { describeRequest, describeRequestFully, type MemoryRequest } from '../memory/memoryRequest.js';
import type { TimelineView } from './timeline.js';

/**
 * An outcome in one line, the form a string among the expected values of
 * `expectOutcomes` is compared with: `default/web success`,
 * `default/web error`.
 */
export function describeOutcome(o: ReconcileOutcome): string {
  return `${o.key} ${o.result}`;
}

function errorText(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}

export const outcomesView: TimelineView<ReconcileOutcome> = {
  name: 'outcomes',
  short: describeOutcome,
  full: (o) => `${describeOutcome(o)} (attempt ${o.attempt}, ${o.duration} ms${o.error === undefined ? '' : `, ${errorText(o.error)}`})`,
};

export const writesView: TimelineView<MemoryRequest> = {
  name: 'writes',
  short: describeRequest,
  full: (r) => `${describeRequestFully(r)}${r.error === undefined ? '' : ` — ${r.error.message}`}`,
};

export const eventsView: TimelineView<RecordedEvent> = {
  name: 'events',
  short: describeEvent,
  full: describeEventFully,
};

/**
 * Why a key ran, in one line, the form a string among the expected items
 * of the `'triggers'` timeline is compared with: the key, then how the
 * delta came to it and whose delta it was:
 * `default/shop via owns Updated deployments.apps default/shop`.
 */
export function describeTrigger(t: TriggerEntry): string {
  return `${t.key} via ${t.cause.via} ${t.cause.delta} ${t.cause.resource} ${t.cause.objectKey}`;
}

export const triggersView: TimelineView<TriggerEntry> = {
  name: 'triggers',
  short: describeTrigger,
  full: (t) => `${describeTrigger(t)}${t.cause.initial === true ? ' (initial)' : ''}`,
};

export const requestsView: TimelineView<MemoryRequest> = { ...writesView, name: 'requests' };
