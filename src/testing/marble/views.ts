import type { ReconcileOutcome } from '../../operators/reconcileByKey.js';
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
