import { expect } from 'chai';
import type { TimelineEntry } from 'rxkube/testing';

type Of<K extends TimelineEntry['type']> = Extract<TimelineEntry, { type: K }>;

/** The entries of one type. */
export function only<K extends TimelineEntry['type']>(entries: readonly TimelineEntry[], type: K): Of<K>[] {
  return entries.filter((e): e is Of<K> => e.type === type);
}

const legal: Record<string, readonly string[]> = {
  idle: ['waiting', 'running'],
  waiting: ['running', 'idle'],
  running: ['waiting', 'delayed', 'idle'],
  delayed: ['waiting', 'idle'],
};

/**
 * The checks every complete timeline passes: entries in time order; each
 * key's states move only as the queue can (idle → waiting/running,
 * waiting → running/idle, running → waiting/delayed/idle, delayed →
 * waiting/idle), where a run-start is the move to `running`, and a run-end
 * comes before the key leaves `running`; every run-start has an earlier trigger of its key
 * (a retry's, before the first run of the series); every write and Event
 * lies between a run-start and the run-end of its key.
 */
export function expectComplete(entries: readonly TimelineEntry[]): void {
  for (let i = 1; i < entries.length; i++) {
    expect(entries[i]?.at, `entry ${i} comes after entry ${i - 1}`).to.be.at.least(entries[i - 1]?.at ?? 0);
  }
  const state = new Map<string, string>();
  const inRun = new Set<string>();
  const triggered = new Set<string>();
  for (const [i, e] of entries.entries()) {
    const where = `entry ${i} (${JSON.stringify(e)})`;
    switch (e.type) {
      case 'trigger':
        triggered.add(e.key);
        break;
      case 'queue': {
        const from = state.get(e.key) ?? 'idle';
        expect(legal[from], `${where}: ${from} → ${e.state}`).to.include(e.state);
        if (from === 'running') expect(inRun.has(e.key), `${where}: the run ended before the key left running`).to.equal(false);
        state.set(e.key, e.state);
        break;
      }
      case 'run-start': {
        const from = state.get(e.key) ?? 'idle';
        expect(legal[from], `${where}: ${from} → running`).to.include('running');
        state.set(e.key, 'running');
        expect(triggered.has(e.key), `${where}: a run with no trigger before it`).to.equal(true);
        expect(inRun.has(e.key), `${where}: two runs at once`).to.equal(false);
        inRun.add(e.key);
        break;
      }
      case 'run-end':
        expect(inRun.has(e.key), `${where}: a run ends that never started`).to.equal(true);
        inRun.delete(e.key);
        break;
      case 'write':
      case 'event':
        expect(inRun.has(e.key), `${where}: outside a run of its key`).to.equal(true);
        break;
      default:
        break;
    }
  }
}
