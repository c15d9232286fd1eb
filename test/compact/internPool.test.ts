import { expect } from 'chai';
import { InternPool } from '../../src/compact/internPool.js';

describe('InternPool (src/compact/internPool)', () => {
  it('gives back the value held under a key, and nothing for a key it never held', () => {
    const pool = new InternPool<object>(10, 1000);
    const value = { a: 1 };
    pool.add('a', value);
    expect(pool.get('a')).to.equal(value);
    expect(pool.get('b')).to.equal(undefined);
  });

  it('holds at most twice its entry bound however many fresh keys pass through it', () => {
    const pool = new InternPool<number>(100, 1_000_000);
    let most = 0;
    for (let i = 0; i < 100_000; i++) {
      pool.add(`key-${i}`, i);
      most = Math.max(most, pool.size);
    }
    expect(most).to.equal(200);
    expect(pool.get('key-0')).to.equal(undefined);
    expect(pool.get('key-99999')).to.equal(99_999);
  });

  it('rotates on its character bound too, and does not hold a key longer than it', () => {
    const pool = new InternPool<number>(1000, 10);
    pool.add('x'.repeat(11), 1);
    expect(pool.size).to.equal(0);
    for (let i = 0; i < 6; i++) pool.add(`k${i}`, i); // 2 chars each: 5 fill a generation
    expect(pool.size).to.equal(6);
    pool.add('abcdefghi', 9); // 9 chars: k5's generation is full, so it becomes the old one and k0…k4 go
    expect(pool.get('k0')).to.equal(undefined);
    expect(pool.get('k5')).to.equal(5);
  });

  it('keeps a value that is looked up every generation, and lets go of one that is not within two', () => {
    const pool = new InternPool<string>(10, 1_000_000);
    pool.add('hot', 'hot');
    pool.add('cold', 'cold');
    for (let i = 0; i < 100; i++) {
      expect(pool.get('hot')).to.equal('hot');
      pool.add(`fresh-${i}`, 'x');
    }
    expect(pool.get('cold')).to.equal(undefined);
    expect(pool.size).to.be.at.most(20);
  });

  it('refuses bounds below 1', () => {
    expect(() => new InternPool(0, 10)).to.throw(RangeError);
    expect(() => new InternPool(10, Number.NaN)).to.throw(RangeError);
  });
});
