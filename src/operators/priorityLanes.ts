/**
 * The priority of a trigger that names none: watch events and external
 * triggers (controller-runtime's default, 0). Higher runs sooner.
 */
export const NORMAL_PRIORITY = 0;

/**
 * The priority `controller()` gives the keys of an initial list, of a
 * periodic resync and of a sharding handoff: controller-runtime's
 * `handler.LowPriority`.
 */
export const LOW_PRIORITY = -100;

/**
 * Ms a waiting key takes to gain 100 points of priority (from
 * `LOW_PRIORITY` to `NORMAL_PRIORITY`) by default: one minute.
 */
export const DEFAULT_AGING = 60_000;

/** What a lane holds: a waiting key's links and rank, kept on the key's own entry (no allocation per wait). */
export interface LaneEntry {
  /** The lane it waits in: the priority of its pending run. */
  priority: number;
  /** The time its rank counts from: when it joined its lane. */
  rankAt: number;
  /** Its place in arrival order over all lanes: ties of rank go to the lower. */
  seq: number;
  next: this | undefined;
  prev: this | undefined;
}

interface Lane<E> {
  readonly priority: number;
  head: E | undefined;
  tail: E | undefined;
  size: number;
}

/** Empty lanes kept for reuse before they are pruned: a queue that empties after each key would otherwise build a lane per key. */
const KEPT_EMPTY_LANES = 16;

/**
 * The waiting keys of a workqueue, by priority, with aging: one FIFO per
 * priority (a lane), and the next key is the head whose *rank* is lowest,
 * ties to the one that arrived first.
 *
 * A key that joined its lane at `t` with priority `p` has, at time `now`,
 * the effective priority `p + (now - t) × 100 / aging`: it gains 100
 * points every `aging` ms it waits. Comparing two keys' effective
 * priorities at the same `now` is comparing `t - p × aging / 100` (the
 * rank: lower runs sooner), which does not change while they wait. So the
 * order is fixed at arrival, and within a lane, where `p` is the same, it
 * is the arrival order: each lane is a plain linked FIFO, and taking the
 * next key compares only the heads of the lanes that hold keys (O(lanes),
 * a handful in practice: the builder uses two). `aging` 0 ranks by arrival
 * alone: one FIFO over all lanes.
 *
 * The bound this gives: a key that starts waiting at `t0` with priority
 * `p` ranks `t0 - p × aging / 100` or better; a key that starts waiting at
 * `t` with a priority of at most `P` ranks `t - P × aging / 100` or worse.
 * So from `t0 + (P - p) × aging / 100` on, no key that arrives (or comes
 * back) ranks ahead of it, and it waits only for the keys already ahead of
 * it then, each of them once.
 */
export class PriorityLanes<E extends LaneEntry> {
  readonly #aging: number;
  readonly #lanes = new Map<number, Lane<E>>();
  /** The lanes that hold keys, in no order. */
  #busy: Lane<E>[] = [];
  /** The lane last pushed to: most pushes go to the same one, and skip the Map. */
  #last: Lane<E> | undefined = undefined;
  #size = 0;
  #seq = 0;

  /** `aging`: ms a waiting key takes to gain 100 points of priority (0: arrival order alone). */
  constructor(aging: number) {
    this.#aging = aging;
  }

  /** Keys waiting, over all lanes. */
  get size(): number {
    return this.#size;
  }

  /** Keys waiting in the lane of `priority`. */
  sizeAt(priority: number): number {
    return this.#lanes.get(priority)?.size ?? 0;
  }

  /** The priorities whose lanes hold keys. */
  priorities(): number[] {
    return this.#busy.map((lane) => lane.priority);
  }

  /**
   * Lower runs sooner: the time it joined its lane less its priority in ms
   * of aging, times 100 (so that whole ms and priorities rank exactly, and
   * what ties in arithmetic ties here).
   */
  rank(e: LaneEntry): number {
    return e.rankAt * 100 - e.priority * this.#aging;
  }

  /** `e` joins the end of the lane of `priority`, ranked from `now`. */
  push(e: E, priority: number, now: number): void {
    let lane = this.#last;
    if (lane === undefined || lane.priority !== priority) {
      lane = this.#lanes.get(priority);
      if (lane === undefined) {
        lane = { priority, head: undefined, tail: undefined, size: 0 };
        this.#lanes.set(priority, lane);
      }
      this.#last = lane;
    }
    e.priority = priority;
    e.rankAt = now;
    e.seq = this.#seq++;
    e.next = undefined;
    e.prev = lane.tail;
    if (lane.tail === undefined) {
      lane.head = e;
      this.#busy.push(lane);
    } else {
      lane.tail.next = e;
    }
    lane.tail = e;
    lane.size++;
    this.#size++;
  }

  /**
   * A trigger of the waiting `e` at `priority`, at `now`: if that ranks it
   * sooner than it ranks already, it moves to the end of that lane, and the
   * priority of the lane it left is returned; else nothing changes
   * (undefined), as when it has already aged past what the trigger gives.
   */
  raise(e: E, priority: number, now: number): number | undefined {
    if (priority <= e.priority || now * 100 - priority * this.#aging >= this.rank(e)) return undefined;
    const from = e.priority;
    this.remove(e);
    this.push(e, priority, now);
    return from;
  }

  /** The key that runs next, out of its lane: the lowest rank, ties to the first arrived. */
  pop(): E | undefined {
    const busy = this.#busy;
    let best = busy[0];
    if (best === undefined) return undefined;
    if (busy.length > 1) {
      let bestHead = best.head as E;
      let bestRank = this.rank(bestHead);
      for (let i = 1; i < busy.length; i++) {
        const lane = busy[i] as Lane<E>;
        const head = lane.head as E;
        const rank = this.rank(head);
        if (rank < bestRank || (rank === bestRank && head.seq < bestHead.seq)) {
          best = lane;
          bestHead = head;
          bestRank = rank;
        }
      }
    }
    // The head leaves its lane: no lookup, no back link to mend.
    const e = best.head as E;
    const next = e.next;
    best.head = next;
    if (next === undefined) best.tail = undefined;
    else next.prev = undefined;
    e.next = undefined;
    best.size--;
    this.#size--;
    if (best.size === 0) this.#idle(best);
    return e;
  }

  /** Takes `e` out of its lane (it must be in one). */
  remove(e: E): void {
    const lane = this.#lanes.get(e.priority) as Lane<E>;
    if (e.prev === undefined) lane.head = e.next;
    else e.prev.next = e.next;
    if (e.next === undefined) lane.tail = e.prev;
    else e.next.prev = e.prev;
    e.next = e.prev = undefined;
    lane.size--;
    this.#size--;
    if (lane.size === 0) this.#idle(lane);
  }

  /** Forgets every lane (the entries' links are the caller's to drop). */
  clear(): void {
    this.#lanes.clear();
    this.#last = undefined;
    this.#busy = [];
    this.#size = 0;
  }

  /** The waiting entries, lane by lane, each lane in its order. */
  *entries(): IterableIterator<E> {
    for (const lane of this.#busy) for (let e = lane.head; e !== undefined; e = e.next) yield e;
  }

  /** Throws through `fail` at the first broken link or count: for `KeyQueue.checkInvariants`. */
  check(fail: (what: string) => never): void {
    let total = 0;
    for (const [priority, lane] of this.#lanes) {
      if (lane.priority !== priority) fail(`the lane of ${priority} is filed under ${lane.priority}`);
      if ((lane.size > 0) !== this.#busy.includes(lane)) fail(`the lane of ${priority} holds ${lane.size} keys but is ${lane.size > 0 ? 'not ' : ''}listed as busy`);
      let n = 0;
      let prev: E | undefined;
      for (let e = lane.head; e !== undefined; e = e.next) {
        if (e.priority !== priority) fail(`"${String((e as { key?: unknown }).key)}" has priority ${e.priority} in the lane of ${priority}`);
        if (e.prev !== prev) fail(`a back link in the lane of ${priority} is wrong`);
        if (prev !== undefined && prev.seq >= e.seq) fail(`the lane of ${priority} is out of arrival order`);
        if (++n > lane.size) fail(`the lane of ${priority} holds more keys than its size ${lane.size}`);
        prev = e;
      }
      if (prev !== lane.tail) fail(`the tail of the lane of ${priority} is not its last key`);
      if (n !== lane.size) fail(`the lane of ${priority} holds ${n} keys, its size says ${lane.size}`);
      total += n;
    }
    if (total !== this.#size) fail(`the lanes hold ${total} keys, their size says ${this.#size}`);
  }

  #idle(lane: Lane<E>): void {
    const busy = this.#busy;
    const i = busy.indexOf(lane);
    busy[i] = busy[busy.length - 1] as Lane<E>;
    busy.pop();
    lane.head = lane.tail = undefined;
    // Memory follows the lanes in use, not every priority ever seen.
    if (this.#lanes.size - busy.length > KEPT_EMPTY_LANES) {
      for (const [priority, l] of this.#lanes) if (l.size === 0) this.#lanes.delete(priority);
      if (this.#last !== undefined && this.#last.size === 0) this.#last = undefined;
    }
  }
}
