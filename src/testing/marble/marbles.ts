import { Observable, Subject, Subscription, type SchedulerLike } from 'rxjs';
import { TestScheduler } from 'rxjs/testing';

/** One notification of a marble diagram, at its frame (virtual ms). */
export type MarbleNotification<T> =
  | { kind: 'N'; value: T }
  | { kind: 'E'; error: unknown }
  | { kind: 'C' };

/** One notification of a marble diagram, at its frame. */
export interface MarbleMessage<T> {
  /** Virtual ms from the start of the diagram. */
  frame: number;
  /** What arrives then: a value, an error or completion. */
  notification: MarbleNotification<T>;
}

/** What `TestScheduler.parseMarbles` returns, as far as we read it. */
interface ParsedMessage {
  frame: number;
  notification: { kind: 'N' | 'E' | 'C'; value?: unknown; error?: unknown };
}

/**
 * Reads a marble diagram with the syntax of `TestScheduler.run`: one frame
 * is 1 ms, spaces are ignored, `10ms`/`2s`/`1m` advance time, `(ab)` groups
 * values at one frame, `|` completes, `#` errors.
 *
 * It reuses rxjs's own parser, which reads the frame length from a static
 * of `TestScheduler`; it is set to 1 for the call only (synchronously, as
 * `run` does for its duration), so no other scheduler sees the change.
 *
 * With `values`, every letter of the diagram must be one of its keys: a
 * letter without a value is a typo, named in the error rather than turned
 * into `undefined`.
 */
export function parseMarbles<T>(marbles: string, values?: Readonly<Record<string, T>>, error?: unknown): MarbleMessage<T>[] {
  if (typeof marbles !== 'string') throw new TypeError(`a marble diagram must be a string, got ${typeof marbles}`);
  if (marbles.includes('^')) throw new Error(`marble diagram '${marbles}': "^" (a subscription point) has no meaning here; time starts at frame 0`);
  const lookup =
    values === undefined
      ? undefined
      : new Proxy(values, {
          get(target, key) {
            if (typeof key === 'string' && !Object.hasOwn(target, key)) {
              throw new Error(
                `marble diagram '${marbles}': "${key}" has no value (the values have ${Object.keys(target)
                  .map((k) => `"${k}"`)
                  .join(', ') || 'no keys'})`,
              );
            }
            return Reflect.get(target, key);
          },
        });
  const saved = TestScheduler.frameTimeFactor;
  TestScheduler.frameTimeFactor = 1;
  let parsed: ParsedMessage[];
  try {
    parsed = TestScheduler.parseMarbles(marbles, lookup, error, false, true) as ParsedMessage[];
  } finally {
    TestScheduler.frameTimeFactor = saved;
  }
  return parsed.map(({ frame, notification }) => {
    if (notification.kind === 'N') return { frame, notification: { kind: 'N', value: notification.value as T } };
    if (notification.kind === 'E') return { frame, notification: { kind: 'E', error: error === undefined ? undefined : notification.error } };
    return { frame, notification: { kind: 'C' } };
  });
}

type Target<T> = { next(v: T): void; error(e: unknown): void; complete(): void };

/** Schedules each message for `target`, `offset` frames earlier than its frame (never in the past). */
function play<T>(scheduler: SchedulerLike, messages: MarbleMessage<T>[], target: Target<T>, offset: number): Subscription {
  const scheduled = new Subscription();
  for (const { frame, notification: n } of messages) {
    scheduled.add(
      scheduler.schedule(() => {
        if (n.kind === 'N') target.next(n.value);
        else if (n.kind === 'E') target.error(n.error ?? new Error('error'));
        else target.complete();
      }, Math.max(0, frame - offset)),
    );
  }
  return scheduled;
}

/** The messages of a diagram that makes a source: one that says when it is unsubscribed makes none. */
function sourceMessages<T>(kind: 'cold' | 'hot', marbles: string, values: Readonly<Record<string, T>> | undefined, error: unknown): MarbleMessage<T>[] {
  if (marbles.includes('!')) throw new Error(`${kind} marble diagram '${marbles}' cannot have an unsubscription marker "!"`);
  return parseMarbles(marbles, values, error);
}

/**
 * A cold Observable from a marble diagram: each subscriber gets the
 * diagram from the frame it subscribed at, on `scheduler`'s clock.
 */
export function coldMarbles<T = string>(
  scheduler: SchedulerLike,
  marbles: string,
  values?: Readonly<Record<string, T>>,
  error?: unknown,
): Observable<T> {
  const messages = sourceMessages('cold', marbles, values, error);
  return new Observable<T>((subscriber) => play(scheduler, messages, subscriber, 0));
}

/**
 * A hot Observable from a marble diagram: its frames count from frame 0 of
 * the run, whoever subscribes and whenever, as with `TestScheduler`'s `hot`.
 * Frames already past when it is made are delivered at once.
 */
export function hotMarbles<T = string>(
  scheduler: SchedulerLike,
  marbles: string,
  values?: Readonly<Record<string, T>>,
  error?: unknown,
): Observable<T> {
  const subject = new Subject<T>();
  play(scheduler, sourceMessages('hot', marbles, values, error), subject, scheduler.now());
  return subject.asObservable();
}

/** The frame of the `|` in a diagram: `time('---|')` is 3. */
export function marbleTime(marbles: string): number {
  const completion = parseMarbles(marbles).find((m) => m.notification.kind === 'C');
  if (completion === undefined) throw new Error(`marble diagram for time '${marbles}' needs a completion marker "|"`);
  return completion.frame;
}
