import { expect } from 'chai';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { VirtualAction, VirtualTimeScheduler } from 'rxjs';
import { eventStream } from '../../src/sinks/metrics/liveView/eventStream.js';

/** The part of a ServerResponse the stream uses, writing into an array synchronously. */
class Page extends EventEmitter {
  status = 0;
  headers: Record<string, string> = {};
  written: string[] = [];
  writableLength = 0;
  writableEnded = false;
  destroyed = false;
  writeHead(status: number, headers: Record<string, string>): this {
    this.status = status;
    this.headers = headers;
    return this;
  }
  write(text: string): boolean {
    this.written.push(text);
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
      maxBuffered: 1 << 20,
      snapshot: () => ({ version }),
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
    const stream = eventStream({ scheduler: time.scheduler, interval: 100, maxBuffered: 1 << 20, snapshot: () => ({}), delta: () => ({ n: ++built }) });
    const pages = [new Page(), new Page(), new Page()];
    for (const page of pages) stream.attach(asResponse(page));
    time.advance(100);
    expect(built).to.equal(2);
    for (const page of pages) expect(page.events().at(-1)).to.deep.equal({ event: 'delta', data: { n: 2 } });
    stream.close();
  });

  it('ticks only while a page is connected: an unwatched view schedules nothing', () => {
    const time = virtualTime();
    const stream = eventStream({ scheduler: time.scheduler, interval: 250, maxBuffered: 1 << 20, snapshot: () => ({}), delta: () => ({}) });
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
    const drops: number[] = [];
    const stream = eventStream({ scheduler: time.scheduler, interval: 250, maxBuffered: 1000, snapshot: () => ({}), delta: () => ({ x: 1 }), onDrop: (n) => drops.push(n) });
    const slow = new Page();
    const fast = new Page();
    stream.attach(asResponse(slow));
    stream.attach(asResponse(fast));
    slow.writableLength = 1001;
    time.advance(250);
    expect(drops).to.deep.equal([1001]);
    expect(slow.destroyed).to.equal(true);
    expect(stream.clients).to.equal(1);
    expect(fast.events().at(-1)?.event).to.equal('delta');
    stream.close();
  });

  it('close() ends every stream, and a page that comes after gets 503', () => {
    const time = virtualTime();
    const stream = eventStream({ scheduler: time.scheduler, interval: 250, maxBuffered: 1000, snapshot: () => ({}), delta: () => undefined });
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
});
