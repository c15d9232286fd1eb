import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { VirtualAction, VirtualTimeScheduler } from 'rxjs';
import { sharedSnapshot } from '../../src/observe/liveView/sharedSnapshot.js';
import { eventStream } from '../../src/observe/liveView/eventStream.js';

/** The part of a ServerResponse the stream uses, writing into an array synchronously. */
class Page extends EventEmitter {
  status = 0;
  headers: Record<string, string> = {};
  written: string[] = [];
  /** What was written, as it was given (the same Buffer objects). */
  chunks: unknown[] = [];
  writableLength = 0;
  writableEnded = false;
  destroyed = false;
  writeHead(status: number, headers: Record<string, string>): this {
    this.status = status;
    this.headers = headers;
    return this;
  }
  write(chunk: string | Buffer): boolean {
    this.chunks.push(chunk);
    this.written.push(chunk.toString());
    return true;
  }
  end(text?: string): this {
    if (text !== undefined) this.written.push(text);
    this.writableEnded = true;
    this.emit('close');
    return this;
  }
  destroy(): this {
    this.destroyed = true;
    return this;
  }
  /** The events sent, parsed. */
  events(): Array<{ event: string; data: unknown }> {
    return this.written
      .join('')
      .split('\n\n')
      .filter((block) => block.includes('event: '))
      .map((block) => {
        const event = /event: (.*)/.exec(block)?.[1] as string;
        const data = JSON.parse(/data: (.*)/.exec(block)?.[1] as string) as unknown;
        return { event, data };
      });
  }
}

const asResponse = (page: Page) => page as unknown as ServerResponse;
const json = (value: unknown) => Buffer.from(JSON.stringify(value));

/** A virtual scheduler moved on by hand: `advance(250)` runs what comes due in the next 250 ms, and nothing later. */
function virtualTime() {
  const scheduler = new VirtualTimeScheduler(VirtualAction, 0);
  return {
    scheduler,
    advance(ms: number) {
      scheduler.maxFrames += ms;
      scheduler.flush();
    },
  };
}

describe('the live view event stream (server-sent events, batched)', () => {
  it('sends a snapshot on connect, then at most one delta per interval carrying everything that changed in it', () => {
    const time = virtualTime();
    let changes: number[] = [];
    const version = 0;
    const stream = eventStream({
      scheduler: time.scheduler,
      interval: 250,
      maxBuffered: 1 << 20, maxClients: 16,
      snapshot: () => json({ version }),
      delta: () => {
        if (changes.length === 0) return undefined;
        const delta = { changes };
        changes = [];
        return delta;
      },
    });
    const page = new Page();
    stream.attach(asResponse(page));
    expect(page.status).to.equal(200);
    expect(page.headers['Content-Type']).to.equal('text/event-stream; charset=utf-8');
    expect(page.written[0]).to.match(/^retry: 1000\n/);
    expect(page.events()).to.deep.equal([{ event: 'snapshot', data: { version: 0 } }]);

    for (let i = 0; i < 500; i++) changes.push(i);
    time.advance(249);
    expect(page.events()).to.have.length(1);
    time.advance(1);
    expect(page.events()).to.have.length(2);
    expect((page.events()[1]?.data as { changes: number[] }).changes).to.have.length(500);
    // Nothing changed: nothing sent.
    time.advance(1000);
    expect(page.events()).to.have.length(2);
    stream.close();
  });

  it('builds each delta once and sends it to every page', () => {
    const time = virtualTime();
    let built = 0;
    const stream = eventStream({ scheduler: time.scheduler, interval: 100, maxBuffered: 1 << 20, maxClients: 16, snapshot: () => json({}), delta: () => ({ n: ++built }) });
    const pages = [new Page(), new Page(), new Page()];
    for (const page of pages) stream.attach(asResponse(page));
    time.advance(100);
    expect(built).to.equal(2);
    for (const page of pages) expect(page.events().at(-1)).to.deep.equal({ event: 'delta', data: { n: 2 } });
    stream.close();
  });

  it('ticks only while a page is connected: an unwatched view schedules nothing', () => {
    const time = virtualTime();
    const stream = eventStream({ scheduler: time.scheduler, interval: 250, maxBuffered: 1 << 20, maxClients: 16, snapshot: () => json({}), delta: () => ({}) });
    expect(time.scheduler.actions).to.have.length(0);
    const page = new Page();
    stream.attach(asResponse(page));
    expect(time.scheduler.actions).to.have.length(1);
    page.emit('close');
    expect(stream.clients).to.equal(0);
    time.advance(250);
    expect(time.scheduler.actions).to.have.length(0);
  });

  it('drops a page that leaves more than maxBuffered bytes unread, and says so; the others go on', () => {
    const time = virtualTime();
    const drops: Array<[number, number]> = [];
    const stream = eventStream({ scheduler: time.scheduler, interval: 250, maxBuffered: 1000, maxClients: 16, snapshot: () => json({}), delta: () => ({ x: 1 }), onDrop: (n, writing) => drops.push([n, writing]) });
    const slow = new Page();
    const fast = new Page();
    stream.attach(asResponse(slow));
    stream.attach(asResponse(fast));
    slow.writableLength = 1001;
    time.advance(250);
    expect(drops).to.deep.equal([[1001, 28]]);
    expect(slow.destroyed).to.equal(true);
    expect(stream.clients).to.equal(1);
    expect(fast.events().at(-1)?.event).to.equal('delta');
    stream.close();
  });

  it('close() ends every stream, and a page that comes after gets 503', () => {
    const time = virtualTime();
    const stream = eventStream({ scheduler: time.scheduler, interval: 250, maxBuffered: 1000, maxClients: 16, snapshot: () => json({}), delta: () => undefined });
    const page = new Page();
    stream.attach(asResponse(page));
    stream.close();
    expect(page.writableEnded).to.equal(true);
    expect(time.scheduler.actions).to.have.length(0);
    const late = new Page();
    stream.attach(asResponse(late));
    expect(late.status).to.equal(503);
    expect(late.written.join('')).to.equal('the live view has stopped\n');
  });

  it('counts the write itself against maxBuffered: a page 900 bytes behind is dropped rather than sent a 200-byte delta that would pass 1000', () => {
    const time = virtualTime();
    const drops: Array<[number, number]> = [];
    const big = { text: 'x'.repeat(160) };
    const stream = eventStream({ scheduler: time.scheduler, interval: 250, maxBuffered: 1000, maxClients: 16, snapshot: () => json({}), delta: () => big, onDrop: (n, writing) => drops.push([n, writing]) });
    const slow = new Page();
    stream.attach(asResponse(slow));
    slow.writableLength = 900;
    time.advance(250);
    expect(drops).to.have.length(1);
    expect(drops[0]?.[0]).to.equal(900);
    expect(900 + (drops[0]?.[1] ?? 0)).to.be.above(1000);
    expect(slow.destroyed).to.equal(true);
    expect(slow.events().map((e) => e.event)).to.deep.equal(['snapshot']);
    stream.close();
  });

  it('counts the snapshot too: one larger than maxBuffered is never sent, the page is told why with a 503 (which EventSource does not retry)', () => {
    const time = virtualTime();
    const refused: string[] = [];
    const stream = eventStream({ scheduler: time.scheduler, interval: 250, maxBuffered: 1000, maxClients: 16, snapshot: () => json({ keys: 'k'.repeat(1000) }), delta: () => undefined, onRefuse: (why) => refused.push(why) });
    const page = new Page();
    stream.attach(asResponse(page));
    expect(page.status).to.equal(503);
    expect(page.written.join('')).to.equal("the live view's snapshot is 1047 bytes, more than maxBuffered (1000): raise maxBuffered, or lower limits.maxKeys\n");
    expect(refused).to.have.length(1);
    expect(stream.clients).to.equal(0);
    expect(time.scheduler.actions).to.have.length(0);
  });

  it('serves at most maxClients pages at once: one more gets 503 saying so, and is let in once another leaves', () => {
    const time = virtualTime();
    const stream = eventStream({ scheduler: time.scheduler, interval: 250, maxBuffered: 1 << 20, maxClients: 2, snapshot: () => json({}), delta: () => undefined });
    const [a, b, c, d] = [new Page(), new Page(), new Page(), new Page()];
    for (const page of [a, b, c]) stream.attach(asResponse(page));
    expect([a.status, b.status, c.status]).to.deep.equal([200, 200, 503]);
    expect(c.written.join('')).to.equal('the live view serves 2 pages at once (maxClients), and as many are open: close one, or raise maxClients\n');
    expect(stream.clients).to.equal(2);
    a.emit('close');
    stream.attach(asResponse(d));
    expect(d.status).to.equal(200);
    stream.close();
  });

  it('writes every page the same Buffers: the snapshot it was given, and each delta serialized once', () => {
    const time = virtualTime();
    const snapshot = json({ keys: ['ns/a'] });
    const stream = eventStream({ scheduler: time.scheduler, interval: 250, maxBuffered: 1 << 20, maxClients: 16, snapshot: () => snapshot, delta: () => ({ n: 1 }) });
    const pages = [new Page(), new Page(), new Page()];
    for (const page of pages) stream.attach(asResponse(page));
    time.advance(250);
    for (const page of pages) {
      expect(page.chunks.every((chunk) => Buffer.isBuffer(chunk))).to.equal(true);
      expect(page.chunks).to.include(snapshot);
    }
    const lastOf = (page: Page) => page.chunks.at(-1);
    expect(lastOf(pages[1] as Page)).to.equal(lastOf(pages[0] as Page));
    expect(lastOf(pages[2] as Page)).to.equal(lastOf(pages[0] as Page));
    stream.close();
  });
});

describe('the live view snapshot, serialized once for all who ask', () => {
  it('builds once for every reader until a delta is taken or it is maxAge old', () => {
    let builds = 0;
    let now = 0;
    const shared = sharedSnapshot(() => ({ n: ++builds }), () => now, 250);
    const first = shared.get();
    expect(shared.get()).to.equal(first);
    now = 249;
    expect(shared.get()).to.equal(first);
    expect(builds).to.equal(1);
    shared.invalidate();
    expect(JSON.parse(shared.get().toString())).to.deep.equal({ n: 2 });
    now = 499;
    expect(JSON.parse(shared.get().toString())).to.deep.equal({ n: 3 });
    expect(builds).to.equal(3);
  });
});
