import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

describe('uniformBuffer', () => {
  // Hidden classes are V8's to tell (`%HaveSameMap`), so the check runs in a
  // child process allowed its natives syntax; execFile's timeout ends it if it hangs.
  it("gives an HTTP body chunk, made in C++, the hidden class of JavaScript's Buffers, over the same bytes", async () => {
    const module = fileURLToPath(new URL('../../src/sources/uniformBuffer.ts', import.meta.url));
    const script = `
      import * as http from 'node:http';
      const { uniformBuffer } = await import(${JSON.stringify(module)});
      const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)');
      const server = http.createServer((req, res) => res.end(Buffer.alloc(4096, 97)));
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const chunk = await new Promise((resolve, reject) => {
        http.get('http://127.0.0.1:' + server.address().port + '/', (res) => res.once('data', resolve)).on('error', reject);
      });
      const view = uniformBuffer(chunk);
      const made = Buffer.from('made in JavaScript');
      console.log(JSON.stringify({
        chunkLikeMade: sameMap(chunk, made),
        viewLikeMade: sameMap(view, made),
        viewLikeConcat: sameMap(view, Buffer.concat([made, made])),
        sameMemory: view.buffer === chunk.buffer && view.byteOffset === chunk.byteOffset && view.length === chunk.length,
      }));
      server.closeAllConnections();
      server.close();
    `;
    const { stdout } = await run(process.execPath, ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      timeout: 20_000,
    });
    const seen = JSON.parse(stdout.trim()) as Record<string, boolean>;
    // The premise: were the chunk already of that class, the view would change nothing.
    expect(seen.chunkLikeMade, 'an HTTP chunk has a hidden class of its own').to.equal(false);
    expect(seen).to.include({ viewLikeMade: true, viewLikeConcat: true, sameMemory: true });
  });
});
