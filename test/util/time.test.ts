import { expect } from 'chai';
import { kubeMicroTime, kubeTime } from '../../src/util/time.js';

describe('Kubernetes time formats (src/util/time)', () => {
  it('writes metav1.Time with whole seconds, from ms or a Date', () => {
    expect(kubeTime(Date.UTC(2024, 4, 1, 11, 30, 0, 999))).to.equal('2024-05-01T11:30:00Z');
    expect(kubeTime(new Date(Date.UTC(2024, 4, 1, 11, 30)))).to.equal('2024-05-01T11:30:00Z');
  });

  it('writes metav1.MicroTime with exactly six fractional digits, keeping sub-millisecond fractions', () => {
    expect(kubeMicroTime(Date.UTC(2024, 0, 2, 3, 4, 5, 678))).to.equal('2024-01-02T03:04:05.678000Z');
    expect(kubeMicroTime(new Date(0))).to.equal('1970-01-01T00:00:00.000000Z');
    expect(kubeMicroTime(0.25)).to.equal('1970-01-01T00:00:00.000250Z');
  });

  it('refuses a time that is not one, naming it', () => {
    expect(() => kubeTime(Number.NaN)).to.throw(TypeError, 'got NaN');
    expect(() => kubeMicroTime(new Date('nope'))).to.throw(TypeError, /valid Date/);
    expect(() => kubeTime(Infinity)).to.throw(TypeError, 'got Infinity');
  });
});
