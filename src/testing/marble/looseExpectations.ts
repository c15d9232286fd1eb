import { AssertionError } from 'node:assert';
import { matchesPattern, renderValue, type Pattern } from './patterns.js';
import { lines, type Timeline, type TimelineView } from './timeline.js';

/**
 * The part of a run a loose expectation looks at, in virtual ms (frames):
 * `{ within: 20 }` is from the start of the run to 20 ms, `{ between: [5, 20] }`
 * from 5 ms to 20 ms, both ends included.
 */
export type TimeWindow = { readonly within: number } | { readonly between: readonly [number, number] };

/** A window as two ends, checked: a bad one is the test's mistake, and says so. */
export function windowEnds(window: TimeWindow | undefined): { from: number; to: number } {
  if (window === undefined) return { from: 0, to: Infinity };
  const isTime = (n: unknown): n is number => typeof n === 'number' && n >= 0 && !Number.isNaN(n);
  if ('within' in window) {
    if (!isTime(window.within)) throw new TypeError(`a time window's within must be a number of ms ≥ 0, got ${renderValue(window.within)}`);
    return { from: 0, to: window.within };
  }
  const between: unknown = (window as { between?: unknown }).between;
  if (Array.isArray(between) && between.length === 2 && isTime(between[0]) && isTime(between[1]) && between[0] <= between[1]) {
    return { from: between[0], to: between[1] };
  }
  throw new TypeError(`a time window is { within: ms } or { between: [from, to] } with 0 ≤ from ≤ to, got ${renderValue(window)}`);
}

function windowText({ from, to }: { from: number; to: number }): string {
  return to === Infinity ? '' : ` within ${from}–${to} ms`;
}

function patternText<T>(pattern: Pattern, view: TimelineView<T>): string {
  return typeof pattern === 'string' && view.short !== undefined ? `'${pattern}'` : renderValue(pattern);
}

function matches<T>(value: T, pattern: Pattern, view: TimelineView<T>): boolean {
  if (typeof pattern === 'string' && view.short !== undefined) return view.short(value) === pattern;
  return matchesPattern(value, pattern);
}

/** The values of a timeline with their frames (its completion and error are not items). */
function items<T>(actual: Timeline<T>): { frame: number; value: T }[] {
  return actual.flatMap((m) => (m.notification.kind === 'N' ? [{ frame: m.frame, value: m.notification.value }] : []));
}

function seen<T>(all: { frame: number; value: T }[], view: TimelineView<T>): string {
  const text = (v: T) => view.full?.(v) ?? view.short?.(v) ?? renderValue(v);
  return `  actual ${view.name}:\n${lines(all.map((i) => ({ frame: i.frame, text: text(i.value) })))}`;
}

function fail(message: string): never {
  throw new AssertionError({ message, operator: 'expectInOrder' });
}

/** An empty list would assert nothing: the test's mistake. */
export function checkExpected(expected: readonly Pattern[], name: string): void {
  if (!Array.isArray(expected) || expected.length === 0) throw new TypeError(`expectInOrder('${name}') needs a non-empty array of the items expected, got ${renderValue(expected)}`);
}

/**
 * Checks that items of a timeline match `expected`, one item each, in that
 * order, inside `window`, with anything else allowed before, between and
 * after them: what a test says when it cares about order and not about
 * frames, so that one more request in a reconcile (which shifts every later
 * frame) does not break it. On a mismatch the `AssertionError` names the
 * first expected item that failed and how: it never came, it came only
 * before the item it should follow, or it came only outside the window;
 * then it lists the timeline.
 */
export function expectInOrder<T>(actual: Timeline<T>, expected: readonly Pattern[], window: TimeWindow | undefined, view: TimelineView<T>): void {
  checkExpected(expected, view.name);
  const ends = windowEnds(window);
  const all = items(actual);
  const inWindow = (i: number) => (all[i] as { frame: number }).frame >= ends.from && (all[i] as { frame: number }).frame <= ends.to;
  // Greedy: each expected item takes the first match after the previous one's, which leaves the most room for the rest.
  let after = -1;
  const found: number[] = [];
  for (const [rank, pattern] of expected.entries()) {
    let at = -1;
    for (let i = after + 1; i < all.length && at < 0; i++) if (inWindow(i) && matches((all[i] as { value: T }).value, pattern, view)) at = i;
    if (at >= 0) {
      found.push(at);
      after = at;
      continue;
    }
    const which = `${view.name}: ${patternText(pattern, view)} (${rank + 1} of ${expected.length} expected in order${windowText(ends)})`;
    const anywhere = all.map((item, i) => ({ ...item, i })).filter((item) => matches(item.value, pattern, view));
    const outside = anywhere.find((item) => item.i > after && !inWindow(item.i));
    if (outside !== undefined) {
      const side = outside.frame > ends.to ? `late: it came at ${outside.frame} ms, after the window ends at ${ends.to} ms` : `early: it came at ${outside.frame} ms, before the window starts at ${ends.from} ms`;
      fail(`${which} is ${side}\n${seen(all, view)}`);
    }
    const before = anywhere.find((item) => item.i <= after);
    if (before !== undefined && rank > 0) {
      const previous = all[found[rank - 1] as number] as { frame: number };
      fail(`${which} is out of order: it came at ${before.frame} ms, not after ${patternText(expected[rank - 1], view)} (${rank} of ${expected.length}) at ${previous.frame} ms\n${seen(all, view)}`);
    }
    fail(`${which} is missing: nothing matched it\n${seen(all, view)}`);
  }
}

/**
 * Checks that no item of a timeline inside `window` matches `pattern`: the
 * loose way to say a reconcile never does something (deletes, fails,
 * records a Warning). The `AssertionError` lists every item that matched.
 */
export function expectNone<T>(actual: Timeline<T>, pattern: Pattern, window: TimeWindow | undefined, view: TimelineView<T>): void {
  const ends = windowEnds(window);
  const all = items(actual);
  const matched = all.filter((item) => item.frame >= ends.from && item.frame <= ends.to && matches(item.value, pattern, view));
  if (matched.length === 0) return;
  const at = matched.map((m) => `${m.frame} ms`).join(', ');
  throw new AssertionError({
    message: `${view.name}: expected none to match ${patternText(pattern, view)}${windowText(ends)}, but ${matched.length} did (at ${at})\n${seen(all, view)}`,
    operator: 'expectNone',
  });
}
