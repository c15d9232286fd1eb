import { expect } from 'chai';
import fc from 'fast-check';
import { ResponseFraming, ResponseFramingError, type ResponseHead } from '../../src/sources/responseFraming.js';

interface Read {
  heads: ResponseHead[];
  body: string;
  ended: boolean;
}

/**
 * Feeds `bytes` cut at `cuts`, each piece in a buffer that is scribbled
 * over once `push` returns (as a socket's one read buffer is), then closes.
 */
function read(bytes: Buffer, cuts: number[] = [], close = true): Read {
  const out: Read = { heads: [], body: '', ended: false };
  const framing = new ResponseFraming({
    head: (h) => out.heads.push(h),
    body: (buf, start, end) => {
      out.body += buf.toString('latin1', start, end);
    },
    end: () => {
      out.ended = true;
    },
  });
  const points = [0, ...[...new Set(cuts)].filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length];
  const scratch = Buffer.alloc(bytes.length + 8);
  for (let i = 1; i < points.length; i++) {
    const piece = bytes.subarray(points[i - 1], points[i]);
    piece.copy(scratch, 4);
    framing.push(scratch, 4, 4 + piece.length);
    scratch.fill(0x7e);
  }
  if (close) framing.close();
  return out;
}

const chunked = (...pieces: string[]) => pieces.map((p) => `${Buffer.byteLength(p, 'latin1').toString(16)}\r\n${p}\r\n`).join('') + '0\r\n\r\n';
const response = (head: string, body: string) => Buffer.from(`${head}\r\n\r\n${body}`, 'latin1');

describe('ResponseFraming (an HTTP/1.1 response from its bytes)', () => {
  it('reads a chunked body whole, wherever the reads cut it, from buffers overwritten after each read', () => {
    const events = ['{"type":"ADDED","object":{}}\n', '{"type":"MODIFIED","object":{"a":"\\r\\n0\\r\\n"}}\n', 'x'.repeat(300)];
    const bytes = response('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked', chunked(...events));
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: bytes.length - 1 }), { maxLength: 20 }), (cuts) => {
        const out = read(bytes, cuts);
        expect(out.heads.map((h) => h.statusCode)).to.deep.equal([200]);
        expect(out.heads[0]?.headers.get('content-type')).to.equal('application/json');
        expect(out.body).to.equal(events.join(''));
        expect(out.ended).to.equal(true);
      }),
    );
  });

  it('reads every cut of a chunked body with extensions, trailers and bare-LF chunk ends, as node:http does', () => {
    const body = '5;name=value\r\nhello\r\n6\r\n world\n0\r\nX-Trailer: yes\r\n\r\n';
    const bytes = response('HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked', body);
    for (let cut = 1; cut < bytes.length; cut++) {
      const out = read(bytes, [cut]);
      expect(out.body, `cut at ${cut}`).to.equal('hello world');
      expect(out.ended).to.equal(true);
    }
  });

  it('reads a Content-Length body and ends there; a body without either ends with the connection', () => {
    const fixed = read(response('HTTP/1.1 403 Forbidden\r\nContent-Length: 5', 'denied'), [20, 30], false);
    expect(fixed.body).to.equal('denie');
    expect(fixed.ended).to.equal(true);
    const untilClose = read(response('HTTP/1.1 200 OK', 'all of it'), [3], false);
    expect(untilClose.ended).to.equal(false);
    const closed = read(response('HTTP/1.1 200 OK', 'all of it'), [3]);
    expect(closed.body).to.equal('all of it');
    expect(closed.ended).to.equal(true);
  });

  it('skips interim responses and a blank line before the status line, joins repeated headers', () => {
    const bytes = Buffer.from('\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 410 Gone\r\nWarning: a\r\nWarning: b\r\nContent-Length: 2\r\n\r\nno');
    const out = read(bytes, [1, 10, 40]);
    expect(out.heads.map((h) => h.statusCode)).to.deep.equal([410]);
    expect(out.heads[0]?.headers.get('warning')).to.equal('a, b');
    expect(out.body).to.equal('no');
  });

  it('names what is wrong with bytes that are not an HTTP/1.1 response', () => {
    const cases: [string, RegExp][] = [
      ['SSH-2.0-OpenSSH\r\n\r\n', /not an HTTP\/1\.1 status line: "SSH-2\.0-OpenSSH"/],
      ['HTTP/1.1 200 OK\r\nno colon here\r\n\r\n', /not a header line: "no colon here"/],
      ['HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n', /Content-Length that is not a number: "ten"/],
      ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', /not a chunk size: "zz"/],
      ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX', /a chunk of the body is not followed by CRLF/],
      ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffff\r\n', /a chunk size of fffffffffffffff bytes/],
    ];
    for (const [text, message] of cases) {
      const error = (() => {
        try {
          read(Buffer.from(text), [], false);
        } catch (err) {
          return err;
        }
        return undefined;
      })();
      expect(error, text).to.be.instanceOf(ResponseFramingError);
      expect((error as ResponseFramingError).message).to.match(message);
      expect((error as ResponseFramingError).cutShort).to.equal(false);
    }
    expect(() => read(Buffer.from(`HTTP/1.1 200 OK\r\nX: ${'a'.repeat(70_000)}\r\n\r\n`), [1000, 40_000], false)).to.throw(ResponseFramingError, /head is larger than 65536 bytes/);
  });

  it('says a response cut short by the connection closing is cut short, in the head or the body', () => {
    for (const text of ['HTTP/1.1 200 OK\r\nContent-Le', 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc', 'HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc']) {
      expect(() => read(Buffer.from(text)), text)
        .to.throw(ResponseFramingError)
        .with.property('cutShort', true);
    }
  });

  it('ignores bytes after a complete response, and has no body for 204', () => {
    const out = read(Buffer.from('HTTP/1.1 204 No Content\r\n\r\nstray'), [5]);
    expect(out.body).to.equal('');
    expect(out.ended).to.equal(true);
  });
});
