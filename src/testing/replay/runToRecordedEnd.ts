import type { VirtualTimeScheduler } from 'rxjs';
import { runVirtualTime, settle } from '../marble/virtualTime.js';

// How many times replay lets callbacks outside virtual time come back while nothing is scheduled, before it stops waiting.
const maxIdleTurns = 21;

/** What `runToRecordedEnd` needs to know of the replay. */
export interface RecordedEndParts {
  /** When the recording started (ms): the warning counts the frame from it. */
  readonly start: number;
  /** True once the replayed controller's output ended. */
  readonly completed: () => boolean;
  /** The runs still in flight, as the warning names them (`run 2 of "default/a"`). */
  readonly inFlight: () => readonly string[];
}

/**
 * Runs virtual time up to the recording's `end`. When it goes idle before
 * then (a run waits on something outside virtual time), lets callbacks
 * outside it come back, and goes on while they schedule more; after more
 * than 20 such idle turns it stops waiting and answers a warning naming
 * the runs still in flight and the frame it stopped at, so that a replay
 * cut short says so. Answers undefined when it ran to the end, the output
 * ended, or an idle turn scheduled nothing.
 */
export async function runToRecordedEnd(scheduler: VirtualTimeScheduler, end: number, parts: RecordedEndParts): Promise<string | undefined> {
  for (let turns = 0; ; turns++) {
    const stop = await runVirtualTime(scheduler, { until: end, stopWhen: parts.completed });
    if (stop.reason !== 'idle' || parts.completed()) return undefined;
    if (turns >= maxIdleTurns) {
      const inFlight = parts.inFlight();
      return (
        `replay stopped waiting after ${turns} idle turns at ${stop.frame - parts.start} ms (nothing scheduled in virtual time before the recording's end): ` +
        (inFlight.length === 0 ? 'no run was in flight' : `still in flight: ${inFlight.join(', ')}`)
      );
    }
    // Idle before the end: let callbacks outside virtual time come back, as runReconcile does.
    await settle();
    if (scheduler.actions.length === 0) return undefined;
  }
}
