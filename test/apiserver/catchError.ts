import { expect } from 'chai';

/** Runs `fn`, asserts that it throws an instance of `type`, and returns that error. */
export function catchError<E extends Error>(fn: () => unknown, type: abstract new (...args: never[]) => E): E {
  try {
    fn();
  } catch (e) {
    expect(e).to.be.instanceOf(type);
    return e as E;
  }
  return expect.fail(`expected a ${type.name}`);
}
