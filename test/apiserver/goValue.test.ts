import { expect } from 'chai';
import { goValue } from '../../src/apiserver/writes/goValue.js';

describe('goValue: a JSON value as Go prints it with %+v', () => {
  it('prints maps with sorted keys, lists, bare strings, booleans and nil', () => {
    expect(goValue({ spec: { b: [1, 'x', true], a: null } })).to.equal('map[spec:map[a:<nil> b:[1 x true]]]');
    expect(goValue([])).to.equal('[]');
    expect(goValue({})).to.equal('map[]');
  });

  it('prints numbers as float64 %g does: short ones whole, long or tiny ones with an exponent', () => {
    const cases: [number, string][] = [
      [80, '80'],
      [123456, '123456'],
      [1000000, '1e+06'],
      [1234567, '1.234567e+06'],
      [0.5, '0.5'],
      [0.0001, '0.0001'],
      [0.00001, '1e-05'],
      [-2.5, '-2.5'],
      [0, '0'],
    ];
    for (const [n, text] of cases) expect(goValue(n), String(n)).to.equal(text);
  });
});
