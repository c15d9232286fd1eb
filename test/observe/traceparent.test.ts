import { expect } from 'chai';
import { TraceFlags } from '@opentelemetry/api';
import { formatTraceparent, parseTraceparent } from '../../src/observe/tracing/traceparent.js';

describe('the rxkube.io/traceparent annotation (W3C Trace Context)', () => {
  const valid = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

  it("reads the specification's example and writes it back the same", () => {
    const context = parseTraceparent(valid);
    expect(context).to.deep.equal({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED, isRemote: true });
    expect(formatTraceparent(context!)).to.equal(valid);
  });

  it('refuses what the specification refuses: version ff, all-zero ids, upper case, extra fields on version 00, no string', () => {
    for (const bad of [
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      `${valid}-extra`,
      'garbage',
      '',
      42,
      undefined,
      { traceparent: valid },
    ]) {
      expect(parseTraceparent(bad), String(bad)).to.equal(undefined);
    }
  });

  it('reads a future version by its first four fields, and keeps only the sampled flag', () => {
    expect(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03-whatever')).to.include({ spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED });
  });
});
