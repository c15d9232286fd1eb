import { expect } from 'chai';
import fc from 'fast-check';
import { Subject, type Subscription } from 'rxjs';
import { silentLogger } from 'rxkube';
import { shardMembership, type ShardState } from '../../src/sinks/leader/shardMembership.js';
import { testScheduler } from '../support/objects.js';
import { at } from './leaderElection.support.js';
import { mulberry32, pausableShard, virtualShardClient, type PausableShardClient } from '../support/shardClients.js';

const slots = 32;
const retryPeriod = 2_000;
const leaseDuration = 15_000;
const renewDeadline = 10_000;
const maxRun = 3_000;
const faultsEnd = 120_000;
/**
 * The bound: once the faults stop (every member either running and
 * connected, or dead), every slot is active on exactly one live member
 * within one lease duration (a dead member's Lease to expire) plus ten
 * retry periods (a first jittered try, seeing the others, a drain's release
 * written and seen, a claim written and confirmed, slow calls) plus the
 * longest run (a drain waits for it).
 */
const bound = leaseDuration + 10 * retryPeriod + maxRun;

type Fault = 'hang' | 'fail' | 'resume' | 'kill' | 'leave' | 'start' | 'clock';

interface Step {
  at: number;
  who: number;
  what: Fault;
}

interface Run {
  who: number;
  slot: number;
  from: number;
  to: number;
}

const stepArb = (members: number): fc.Arbitrary<Step> =>
  fc.record({
    at: fc.integer({ min: 0, max: faultsEnd - 1 }),
    who: fc.integer({ min: 0, max: members - 1 }),
    what: fc.constantFrom<Fault>('hang', 'fail', 'resume', 'resume', 'kill', 'leave', 'start', 'start', 'clock'),
  });

const scenarioArb = fc.integer({ min: 2, max: 4 }).chain((members) =>
  fc.record({
    members: fc.constant(members),
    steps: fc.array(stepArb(members), { maxLength: 25 }),
    maxLatency: fc.integer({ min: 0, max: 600 }),
    // Who is dead for good once the faults stop (at least one stays).
    deadAtEnd: fc.array(fc.boolean(), { minLength: members, maxLength: members }),
    seed: fc.integer(),
  }),
);

/** One member of the simulation: its membership, its runs (started at random in its active slots), its wall clock. */
interface Member {
  client: PausableShardClient;
  subscription?: Subscription;
  state?: ShardState;
  running: Map<number, Run[]>;
  clockOffset: number;
  stop?: () => void;
  /** The subscription whose states steer the runs: a left member's release in flight does not. */
  incarnation?: object;
}

type Scenario = typeof scenarioArb extends fc.Arbitrary<infer S> ? S : never;

function simulate(scenario: Scenario) {
  const random = mulberry32(scenario.seed);
  const ts = testScheduler();
  const runs: Run[] = [];
  const errors: unknown[] = [];
  const atEnd: Array<Map<number, number[]>> = [];
  ts.run(() => {
    const { client } = virtualShardClient(ts, () => Math.floor(random() * (scenario.maxLatency + 1)));
    const members: Member[] = Array.from({ length: scenario.members }, () => ({ client: pausableShard(client), running: new Map(), clockOffset: 0 }));

    const end = (member: Member, slot: number, run: Run): void => {
      const list = member.running.get(slot) ?? [];
      if (!list.includes(run)) return;
      run.to = ts.now();
      runs.push(run);
      member.running.set(slot, list.filter((r) => r !== run));
    };
    const endAll = (member: Member, keep: (slot: number) => boolean = () => false): void => {
      for (const [slot, list] of member.running) if (!keep(slot)) for (const run of list) end(member, slot, run);
    };
    const start = (who: number): void => {
      const member = members[who]!;
      if (member.subscription !== undefined) return;
      const stop = new Subject<void>();
      const incarnation = {};
      member.incarnation = incarnation;
      member.subscription = shardMembership({
        client: member.client.client,
        namespace: 'default',
        controller: 'sim',
        // The same identity across restarts: its Lease is found still its own.
        identity: `member-${who}`,
        slots,
        retryPeriod,
        leaseDuration,
        renewDeadline,
        gracePeriod: 5_000,
        // Barely past a lease duration (the default is 30 minutes), so that Leases of crashed and departed members are collected, and come back, under the faults too.
        collectAfter: 20_000,
        busy: (slot) => (member.running.get(slot)?.length ?? 0) > 0,
        stop,
        scheduler: ts,
        wallClock: () => ts.now() + member.clockOffset,
        random,
        logger: silentLogger,
      }).subscribe({
        next: (state) => {
          // A member that left may still be giving its Lease up: what it says no longer steers the runs.
          if (member.incarnation !== incarnation) return;
          member.state = state;
          // The host's side of the contract: runs of slots neither active nor draining, or overdue, are aborted now.
          endAll(member, (slot) => (state.active.has(slot) || state.draining.has(slot)) && !state.overdue.has(slot));
        },
        error: (err: unknown) => errors.push(err),
        complete: () => {
          if (member.incarnation === incarnation) member.state = undefined;
        },
      });
      member.stop = () => stop.next();
    };
    const gone = (member: Member): void => {
      member.subscription?.unsubscribe();
      member.subscription = undefined;
      member.state = undefined;
      member.incarnation = undefined;
    };
    const kill = (who: number): void => {
      const member = members[who]!;
      // A crash: its runs end with it, and its Lease is left to expire (the release on unsubscribe cannot get through).
      member.client.pause('fail');
      endAll(member);
      gone(member);
    };
    const leave = (who: number): void => {
      const member = members[who]!;
      if (member.subscription === undefined) return;
      // A graceful leave: the host has let its runs finish, then tells membership to stop.
      endAll(member);
      member.stop?.();
      const subscription = member.subscription;
      at(ts, ts.now() + renewDeadline + 1, () => subscription.unsubscribe());
      member.subscription = undefined;
      member.state = undefined;
      member.incarnation = undefined;
    };

    // The workload: every 500 ms each member may start a run in one of its active slots.
    const work = (): void => {
      for (const [who, member] of members.entries()) {
        const active = [...(member.state?.active ?? [])];
        if (active.length === 0 || random() < 0.3) continue;
        const slot = active[Math.floor(random() * active.length)]!;
        const run: Run = { who, slot, from: ts.now(), to: Infinity };
        member.running.set(slot, [...(member.running.get(slot) ?? []), run]);
        ts.schedule(() => end(member, slot, run), 1 + Math.floor(random() * maxRun));
      }
      if (ts.now() < faultsEnd + bound + 10_000) ts.schedule(work, 500);
    };

    for (let who = 0; who < scenario.members; who += 1) start(who);
    ts.schedule(work, 500);
    for (const step of [...scenario.steps].sort((a, b) => a.at - b.at)) {
      at(ts, step.at, () => {
        const member = members[step.who]!;
        if (step.what === 'hang' || step.what === 'fail') member.client.pause(step.what);
        else if (step.what === 'resume') member.client.resume();
        else if (step.what === 'kill') kill(step.who);
        else if (step.what === 'leave') leave(step.who);
        else if (step.what === 'clock') member.clockOffset += Math.floor((random() - 0.5) * 7_200_000);
        else {
          member.client.resume();
          start(step.who);
        }
      });
    }
    const keepDead = scenario.deadAtEnd.every(Boolean) ? scenario.deadAtEnd.map((dead: boolean, i: number) => dead && i !== 0) : scenario.deadAtEnd;
    at(ts, faultsEnd, () => {
      for (const [who, member] of members.entries()) {
        if (keepDead[who]) kill(who);
        else {
          member.client.resume();
          start(who);
        }
      }
    });
    at(ts, faultsEnd + bound, () => {
      const owners = new Map<number, number[]>();
      for (const [who, member] of members.entries()) for (const slot of member.state?.active ?? []) owners.set(slot, [...(owners.get(slot) ?? []), who]);
      atEnd.push(owners);
    });
    at(ts, faultsEnd + bound + 10_000, () => {
      for (const member of members) {
        endAll(member);
        gone(member);
      }
    });
  });
  return { runs, errors, owners: atEnd[0]! };
}

describe('shardMembership: properties', () => {
  it(`for any joins, leaves, crashes, pauses, clock steps and latencies: no slot runs on two members at once, and every slot has one owner within ${bound} ms of the faults stopping`, function () {
    this.timeout(120_000);
    fc.assert(
      fc.property(scenarioArb, (scenario) => {
        const { runs, errors, owners } = simulate(scenario);
        expect(errors).to.deep.equal([]);
        const bySlot = new Map<number, Run[]>();
        for (const run of runs) bySlot.set(run.slot, [...(bySlot.get(run.slot) ?? []), run]);
        const overlaps: string[] = [];
        for (const [slot, list] of bySlot) {
          list.forEach((x, i) =>
            list.slice(i + 1).forEach((y) => {
              if (x.who !== y.who && x.from < y.to && y.from < x.to) overlaps.push(`slot ${slot}: member-${x.who} [${x.from}, ${x.to}) and member-${y.who} [${y.from}, ${y.to})`);
            }),
          );
        }
        expect(overlaps, 'runs of one slot on two members at once').to.deep.equal([]);
        const unowned = Array.from({ length: slots }, (_, slot) => slot).filter((slot) => owners.get(slot)?.length !== 1);
        expect(unowned, 'slots without exactly one owner at the bound').to.deep.equal([]);
        expect(runs.length, 'the workload ran').to.be.greaterThan(0);
      }),
      { numRuns: 60 },
    );
  });
});
