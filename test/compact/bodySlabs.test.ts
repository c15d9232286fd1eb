import { expect } from 'chai';
import fc from 'fast-check';
import { BodySlabs, KEEP, OWN_BUFFER_BYTES, SLAB_BYTES, SLACK, type Slab, type SlabBody } from '../../src/compact/bodySlabs.js';

/** A body as a record holds one, its bytes a pattern only it has. */
class Body implements SlabBody {
  body: Buffer | string | undefined = undefined;
  at = 0;
  length = 0;
  slab: Slab | undefined = undefined;
  slot = 0;
  constructor(readonly id: number) {}

  expected(length: number): Buffer {
    const out = Buffer.alloc(length);
    for (let i = 0; i < length; i++) out[i] = (this.id * 31 + i * 7) & 0xff;
    return out;
  }

  write(slabs: BodySlabs, length: number): void {
    slabs.place(this, length);
    this.expected(length).copy(this.body as Buffer, this.at);
  }

  read(): Buffer {
    return (this.body as Buffer).subarray(this.at, this.at + this.length);
  }
}

/** The most the slabs may hold past their current bodies: the bound, the slab being filled and one body's worth. */
function allowed(slabs: BodySlabs, slabBytes = SLAB_BYTES, slack = SLACK): number {
  return slabs.liveBytes + Math.max(slack, slabs.liveBytes * (1 / KEEP - 1)) + slabBytes + slabBytes / 4;
}

describe('BodySlabs: compact bodies in slabs outside the heap, counted by the records still current', () => {
  it('keeps every body readable, released or moved, and the slabs within their bound of the current bodies, through any sequence of places and releases (property)', () => {
    let moved = 0;
    const step = fc.oneof(
      // Slabs of 512 bytes and a slack of two, so that a few hundred steps fill, empty and move many.
      { weight: 3, arbitrary: fc.record({ op: fc.constant('place' as const), length: fc.oneof(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 126, max: 130 })) }) },
      { weight: 2, arbitrary: fc.record({ op: fc.constant('release' as const), pick: fc.nat() }) },
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 400, size: 'max' }), (steps) => {
        const slabs = new BodySlabs(512, 1024);
        const current: Body[] = [];
        const released: Body[] = [];
        let id = 0;
        for (const s of steps) {
          if (s.op === 'place') {
            const body = new Body(id++);
            body.write(slabs, s.length);
            current.push(body);
          } else if (current.length > 0) {
            const [body] = current.splice(s.pick % current.length, 1) as [Body];
            slabs.release(body);
            expect(body.slab, 'a released body counts in no slab').to.equal(undefined);
            released.push(body);
          }
          const inSlabs = current.filter((b) => b.length <= 128).reduce((n, b) => n + b.length, 0);
          expect(slabs.liveBytes).to.equal(inSlabs);
          expect(slabs.heldBytes).to.be.at.most(allowed(slabs, 512, 1024));
        }
        for (const body of [...current, ...released]) expect(body.read().equals(body.expected(body.length)), `body ${body.id}`).to.equal(true);
        moved += slabs.moved;
      }),
      { numRuns: 300 },
    );
    expect(moved, 'bodies moved across the runs').to.be.greaterThan(100);
  });

  it('moves nothing when bodies are replaced in the order they came, as a round of updates over every key replaces them', () => {
    const slabs = new BodySlabs();
    const keys = 2_000;
    const bodies: Body[] = [];
    let id = 0;
    for (let k = 0; k < keys; k++) {
      const body = new Body(id++);
      body.write(slabs, 1_100);
      bodies.push(body);
    }
    for (let round = 0; round < 5; round++) {
      for (let k = 0; k < keys; k++) {
        slabs.release(bodies[k] as Body);
        const body = new Body(id++);
        body.write(slabs, 1_100);
        bodies[k] = body;
      }
    }
    expect(slabs.moved).to.equal(0);
    // One slab's worth past the current bodies at most: the oldest, emptying, and the one being filled.
    expect(slabs.heldBytes).to.be.at.most(slabs.liveBytes + 3 * SLAB_BYTES);
    for (const body of bodies) expect(body.read().equals(body.expected(1_100))).to.equal(true);
  });

  it('moves the few bodies still current out of slabs the others left, so that a slab is not kept for one body (a few cold keys among hot ones)', () => {
    const slabs = new BodySlabs();
    const cold: Body[] = [];
    let hot: Body[] = [];
    let id = 0;
    // One cold body in every twenty; the hot ones are replaced again and again.
    for (let i = 0; i < 20_000; i++) {
      const body = new Body(id++);
      body.write(slabs, 1_000);
      if (i % 20 === 0) cold.push(body);
      else hot.push(body);
      if (hot.length > 200) {
        for (const gone of hot) slabs.release(gone);
        hot = [];
      }
    }
    const coldBytes = cold.length * 1_000;
    expect(slabs.moved, 'cold bodies moved').to.be.greaterThan(0);
    // Without moving them, every slab ever filled would stay: one cold body pins each.
    expect(slabs.slabsMade * SLAB_BYTES).to.be.greaterThan(10 * coldBytes);
    expect(slabs.heldBytes).to.be.at.most(allowed(slabs));
    expect(slabs.liveBytes).to.be.at.least(coldBytes);
    for (const body of cold) expect(body.read().equals(body.expected(1_000)), `cold body ${body.id}`).to.equal(true);
  });

  it('empties the sparsest slab first', () => {
    // Slabs of eight 64-byte bodies, no slack.
    const slabs = new BodySlabs(512, 0);
    const bodies: Body[] = [];
    for (let i = 0; i < 8 * 21; i++) {
      const body = new Body(i);
      body.write(slabs, 64);
      bodies.push(body);
    }
    const slabOf = (i: number) => bodies[i]?.body;
    // Slab 5 keeps one body of eight; then the others lose three of eight each, until the bound is passed.
    for (let k = 0; k < 7; k++) slabs.release(bodies[5 * 8 + k] as Body);
    expect(slabs.moved).to.equal(0);
    const lone = bodies[5 * 8 + 7] as Body;
    const lonesSlab = lone.body;
    for (let slab = 0; slab < 20 && slabs.moved === 0; slab++) {
      if (slab === 5) continue;
      for (let k = 0; k < 3; k++) slabs.release(bodies[slab * 8 + k] as Body);
    }
    expect(slabs.moved, 'only the lone body of the sparsest slab moved').to.equal(1);
    expect(lone.body).to.not.equal(lonesSlab);
    expect(slabOf(0)).to.equal(slabOf(7));
    expect(lone.read().equals(lone.expected(64))).to.equal(true);
  });

  it('is inactive until the first release, and gives a body larger than a quarter slab a buffer of its own', () => {
    const slabs = new BodySlabs();
    expect(slabs.active).to.equal(false);
    const big = new Body(1);
    big.write(slabs, OWN_BUFFER_BYTES + 1);
    expect(big.slab).to.equal(undefined);
    expect((big.body as Buffer).length).to.equal(OWN_BUFFER_BYTES + 1);
    expect(slabs.liveBytes).to.equal(0);
    slabs.release(big);
    expect(slabs.active).to.equal(true);
    expect(big.read().equals(big.expected(OWN_BUFFER_BYTES + 1))).to.equal(true);
  });
});
