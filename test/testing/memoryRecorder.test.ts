import { expect } from 'chai';
import { TestScheduler } from 'rxjs/testing';
import type { EventInput, KubeObject } from 'rxkube';
import { memoryRecorder } from 'rxkube/testing';

const web: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web', namespace: 'default', uid: 'u1', resourceVersion: '7' } };

describe('memoryRecorder', () => {
  it('records each call with its virtual time and the reference the real recorder would write', () => {
    const scheduler = new TestScheduler(() => undefined);
    const recorder = memoryRecorder({ scheduler });
    scheduler.schedule(() => recorder.record(web, { type: 'Normal', reason: 'Scaled', action: 'Scale', note: 'to 3', related: { name: 'rs', kind: 'ReplicaSet' } }), 12);
    scheduler.flush();
    recorder.record(web, { type: 'Normal', reason: 'Scaled', action: 'Scale' });
    expect(recorder.events).to.deep.equal([
      {
        at: 12,
        type: 'Normal',
        reason: 'Scaled',
        action: 'Scale',
        note: 'to 3',
        regarding: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'default', uid: 'u1', resourceVersion: '7' },
        key: 'default/web',
        related: { name: 'rs', kind: 'ReplicaSet' },
      },
      {
        at: 12,
        type: 'Normal',
        reason: 'Scaled',
        action: 'Scale',
        regarding: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', namespace: 'default', uid: 'u1', resourceVersion: '7' },
        key: 'default/web',
      },
    ]);
    expect(recorder.stats()).to.deep.include({ recorded: 2, failed: 0 });
  });

  it('never throws into the caller: what the real recorder refuses lands in `refused`', () => {
    const recorder = memoryRecorder();
    recorder.record(web, { type: 'Info', reason: 'X', action: 'Y' } as unknown as EventInput);
    recorder.record(web, { type: 'Normal', reason: '', action: 'Y' });
    recorder.record({ metadata: {} }, { type: 'Normal', reason: 'X', action: 'Y' });
    expect(recorder.events).to.deep.equal([]);
    expect(recorder.refused.map((r) => r.error)).to.deep.equal([
      'event type must be "Normal" or "Warning", got "Info"',
      'event reason must be 1 to 128 characters, got ""',
      'cannot reference an object without a name',
    ]);
    expect(recorder.stats().failed).to.equal(3);
  });

  it('drops what is recorded after close', async () => {
    const recorder = memoryRecorder();
    await recorder.close();
    recorder.record(web, { type: 'Normal', reason: 'X', action: 'Y' });
    expect(recorder.events).to.have.length(0);
    expect(recorder.stats().dropped).to.equal(1);
  });
});
