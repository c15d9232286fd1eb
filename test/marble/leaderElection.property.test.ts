import { expect } from 'chai';
import fc from 'fast-check';
import type { Subscription } from 'rxjs';
import { silentLogger, leaderElection } from 'rxkube';
import { pausable, type PausableLeaseClient } from 'rxkube/testing';
import { at, virtually } from './leaderElection.support.js';

type Fault = 'hang' | 'fail' | 'resume' | 'stop' | 'start';

interface Event {
  at: number;
  who: number;
  what: Fault;
}

interface Interval {
  who: number;
  from: number;
  to: number;
}

/** A small seeded generator, so one fast-check seed replays the same latencies and jitter. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const faultsEnd = 120_000;
/** Far more than a takeover needs once faults stop: lease + deadline + a few jittered tries of slow calls. */
const settle = 60_000;

const eventArb = (replicas: number): fc.Arbitrary<Event> =>
  fc.record({
    at: fc.integer({ min: 0, max: faultsEnd - 1 }),
    who: fc.integer({ min: 0, max: replicas - 1 }),
    what: fc.constantFrom<Fault>('hang', 'fail', 'resume', 'resume', 'stop', 'start'),
  });

const scenarioArb = fc.integer({ min: 2, max: 4 }).chain((replicas) =>
  fc.record({
    replicas: fc.constant(replicas),
    events: fc.array(eventArb(replicas), { maxLength: 30 }),
    maxLatency: fc.integer({ min: 0, max: 800 }),
    seed: fc.integer(),
  }),
);

describe('leaderElection: properties', () => {
  it('for any pauses, failures, restarts and latencies: never two leaders at once, and one leader once the faults stop', () => {
    fc.assert(
      fc.property(scenarioArb, ({ replicas, events, maxLatency, seed }) => {
        const random = mulberry32(seed);
        const result = virtually(
          (ts, store) => {
            const intervals: Interval[] = [];
            const leadingSince = new Map<number, number>();
            const errors: unknown[] = [];
            const clients: PausableLeaseClient[] = [];
            const subscriptions = new Map<number, Subscription>();

            const close = (who: number): void => {
              const from = leadingSince.get(who);
              if (from !== undefined) intervals.push({ who, from, to: ts.now() });
              leadingSince.delete(who);
            };
            const start = (who: number): void => {
              if (subscriptions.has(who)) return;
              const subscription = leaderElection({
                client: clients[who]!.client,
                lease: 'default/lock',
                // The same identity across restarts: the hardest case for a release.
                identity: `replica-${who}`,
                scheduler: ts,
                random,
                logger: silentLogger,
              }).subscribe({
                next: (state) => {
                  if (state.leading && !leadingSince.has(who)) leadingSince.set(who, ts.now());
                  if (!state.leading) close(who);
                },
                error: (err: unknown) => errors.push(err),
              });
              subscriptions.set(who, subscription);
            };
            const stop = (who: number): void => {
              // The work stops with the subscription: its interval ends here.
              close(who);
              subscriptions.get(who)?.unsubscribe();
              subscriptions.delete(who);
            };

            for (let who = 0; who < replicas; who += 1) {
              clients.push(pausable(store));
              start(who);
            }
            for (const event of [...events].sort((a, b) => a.at - b.at)) {
              at(ts, event.at, () => {
                const client = clients[event.who]!;
                if (event.what === 'hang' || event.what === 'fail') client.pause(event.what);
                else if (event.what === 'resume') client.resume();
                else if (event.what === 'stop') stop(event.who);
                else start(event.who);
              });
            }
            at(ts, faultsEnd, () => {
              for (let who = 0; who < replicas; who += 1) {
                clients[who]!.resume();
                start(who);
              }
            });
            const leadersAtEnd: number[] = [];
            at(ts, faultsEnd + settle, () => {
              leadersAtEnd.push(...leadingSince.keys());
              for (let who = 0; who < replicas; who += 1) stop(who);
            });
            return { intervals, errors, leadersAtEnd };
          },
          () => Math.floor(random() * (maxLatency + 1)),
        );

        expect(result.errors).to.deep.equal([]);
        const overlaps = result.intervals.flatMap((x, i) =>
          result.intervals
            .slice(i + 1)
            .filter((y) => x.who !== y.who && x.from < y.to && y.from < x.to)
            .map((y) => `replica-${x.who} [${x.from}, ${x.to}) and replica-${y.who} [${y.from}, ${y.to})`),
        );
        expect(overlaps, 'leaders at once').to.deep.equal([]);
        expect(result.leadersAtEnd, 'leaders once faults stopped').to.have.length(1);
      }),
      { numRuns: 150 },
    );
  });

});
