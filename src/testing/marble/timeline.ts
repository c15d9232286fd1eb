import { AssertionError } from 'node:assert';
import { parseMarbles, type MarbleMessage, type MarbleNotification } from './marbles.js';
import { matchesPattern, projectOnto, renderValue, type Pattern } from './patterns.js';

/** What was seen of a stream: each notification at its frame (virtual ms). */
export type Timeline<T> = MarbleMessage<T>[];

/** How the values of one kind of timeline read in expectations and failure messages. */
export interface TimelineView<T> {
  /** Names the timeline in messages: `outcomes`, `writes`, `events`. */
  name: string;
  /**
   * The short form that a string among the expected values is compared
   * with (`'default/web success'`). Without it, strings compare as values.
   */
  short?: (value: T) => string;
  /** The whole story of a value that did not match, for the failure message. */
  full?: (value: T) => string;
}

const maxLines = 60;

function frameLabel(frame: number, width: number): string {
  return `    ${`${frame}ms`.padStart(width + 2)}`;
}

function expectedText<T>(n: MarbleNotification<unknown>, view: TimelineView<T>): string {
  if (n.kind === 'C') return '| (complete)';
  if (n.kind === 'E') return `# ${n.error === undefined ? '(any error)' : renderValue(n.error)}`;
  return typeof n.value === 'string' && view.short !== undefined ? n.value : renderValue(n.value);
}

function actualText<T>(n: MarbleNotification<T>, like: MarbleNotification<unknown> | undefined, view: TimelineView<T>): string {
  if (n.kind === 'C') return '| (complete)';
  if (n.kind === 'E') {
    if (like?.kind === 'E' && like.error !== undefined) return `# ${renderValue(projectOnto(n.error, like.error))}`;
    return `# ${renderValue(n.error)}`;
  }
  const pattern = like?.kind === 'N' ? like.value : undefined;
  if (like?.kind === 'N' && typeof pattern === 'string' && view.short !== undefined) {
    const short = view.short(n.value);
    return short === pattern || view.full === undefined ? short : view.full(n.value);
  }
  if (like?.kind === 'N') {
    if (matchesValue(n.value, pattern, view)) return renderValue(pattern);
    return view.full !== undefined && typeof pattern !== 'object' ? view.full(n.value) : renderValue(projectOnto(n.value, pattern));
  }
  return view.full !== undefined ? view.full(n.value) : renderValue(n.value);
}

function matchesValue<T>(value: T, pattern: Pattern, view: TimelineView<T>): boolean {
  if (typeof pattern === 'string' && view.short !== undefined) return view.short(value) === pattern;
  return matchesPattern(value, pattern);
}

function sameNotification<T>(a: MarbleMessage<T>, e: MarbleMessage<unknown>, view: TimelineView<T>): boolean {
  if (a.frame !== e.frame || a.notification.kind !== e.notification.kind) return false;
  if (a.notification.kind === 'N' && e.notification.kind === 'N') return matchesValue(a.notification.value, e.notification.value, view);
  if (a.notification.kind === 'E' && e.notification.kind === 'E') {
    return e.notification.error === undefined || matchesPattern(a.notification.error, e.notification.error);
  }
  return true;
}

/** Rows of a timeline, one a line, each at its frame: the layout of every failure message here (and of replay's differences). */
export function lines(rows: { frame: number; text: string }[]): string {
  const width = Math.max(1, ...rows.map((r) => String(r.frame).length));
  const shown = rows.slice(0, maxLines).map((r) => `${frameLabel(r.frame, width)}  ${r.text}`);
  if (rows.length > maxLines) shown.push(`  … ${rows.length - maxLines} more`);
  return shown.length === 0 ? '  (nothing)' : shown.join('\n');
}

/**
 * Compares what a stream did with a marble diagram (`TestScheduler.run`
 * syntax, 1 frame = 1 ms), the values being patterns (see `Pattern`). On a
 * mismatch it throws an `AssertionError` whose message lists both
 * timelines, one notification a line, each actual value shown through its
 * expected pattern so that only real differences stand out; `actual` and
 * `expected` hold the same lines, for a test runner's diff.
 */
export function expectTimeline<T>(
  actual: Timeline<T>,
  marbles: string,
  values: Readonly<Record<string, Pattern>> | undefined,
  errorValue: unknown,
  view: TimelineView<T>,
): void {
  const expected = parseMarbles<Pattern>(marbles, values, errorValue);
  const ok = actual.length === expected.length && actual.every((a, i) => sameNotification(a, expected[i] as MarbleMessage<unknown>, view));
  if (ok) return;
  const expectedLines = lines(expected.map((e) => ({ frame: e.frame, text: expectedText(e.notification, view) })));
  const actualLines = lines(
    actual.map((a, i) => {
      // Seen through the expected notification of the same rank, even at another frame: a value that is
      // right but late then reads as its pattern, and only its frame differs.
      const like = expected[i]?.notification;
      return { frame: a.frame, text: actualText(a.notification, like, view) };
    }),
  );
  throw new AssertionError({
    message: `${view.name} do not match the marble diagram '${marbles}'\n  expected:\n${expectedLines}\n  actual:\n${actualLines}`,
    actual: actualLines,
    expected: expectedLines,
    operator: 'marbles',
  });
}

/** Records a stream's notifications as a timeline, reading frames from `now`. */
export function timelineRecorder<T>(now: () => number): {
  timeline: Timeline<T>;
  next: (value: T) => void;
  error: (error: unknown) => void;
  complete: () => void;
} {
  const timeline: Timeline<T> = [];
  return {
    timeline,
    next: (value) => timeline.push({ frame: now(), notification: { kind: 'N', value } }),
    error: (error) => timeline.push({ frame: now(), notification: { kind: 'E', error } }),
    complete: () => timeline.push({ frame: now(), notification: { kind: 'C' } }),
  };
}
