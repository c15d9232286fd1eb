import { expect } from 'chai';
import { join } from 'node:path';
import { rotatedParts, rotatedPath } from '../../../src/observe/recording/rotatedNames.js';

describe('rotatedNames (how a recording names its rotated files, for writer and reader alike)', () => {
  const path = join('/rec', 'run.jsonl');

  it('names part 0 as the path itself and part n as path.n', () => {
    expect([0, 1, 12].map((n) => rotatedPath(path, n))).to.deep.equal([path, `${path}.1`, `${path}.12`]);
  });

  it("finds the rotated parts among a folder's names, in order of their number, and nothing else", () => {
    const names = ['run.jsonl', 'run.jsonl.10', 'run.jsonl.2', 'run.jsonl.1', 'run.jsonl.1.bak', 'run.jsonl.', 'run.jsonl.old', 'run.jsonlx.1', 'other.jsonl.1', 'run.jsonl.-1'];
    expect(rotatedParts(path, names)).to.deep.equal([
      { n: 1, file: `${path}.1` },
      { n: 2, file: `${path}.2` },
      { n: 10, file: `${path}.10` },
    ]);
  });
});
