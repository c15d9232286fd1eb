import { expect } from 'chai';
import { runCli } from '../src/cli.js';
import { closest } from '../src/util/cli.js';

/** What a command wrote and returned, run in process (it fails before it would start anything). */
async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(args, { out: (l) => out.push(l), err: (l) => err.push(l), untilStopped: () => Promise.resolve() });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('an unknown option or command: named, with the closest known one', () => {
  // Every command of src/cli.ts, with a misspelling of one of its options.
  const misspelt: [string, string, string][] = [
    ['apiserver', '--prot', '--port'],
    ['apiserver', '--kubeconfg', '--kubeconfig'],
    ['manifests', '--namspace', '--namespace'],
    ['manifests', '--replica', '--replicas'],
    ['run', '--healthport', '--health-port'],
    ['run', '--webhook-cert', '--webhook-cert-dir'],
    ['replay', '--reconcil', '--reconcile'],
    ['replay', '--exprot', '--export'],
  ];
  for (const [command, typed, meant] of misspelt) {
    it(`rxkube ${command} ${typed}: exit 2, "unknown option ${typed} (did you mean ${meant}?)", none of parseArgs' advice`, async () => {
      const { code, out, err } = await cli([command, typed, 'v']);
      expect(code).to.equal(2);
      expect(out).to.equal('');
      expect(err.split('\n')[0]).to.equal(`rxkube ${command}: unknown option ${typed} (did you mean ${meant}?)`);
      expect(err).not.to.contain('positional argument');
    });
  }

  it('names an option far from every known one without a guess, and a short one as typed', async () => {
    expect((await cli(['manifests', 'x.ts', '--zzzzzz'])).err.split('\n')[0]).to.equal('rxkube manifests: unknown option --zzzzzz');
    expect((await cli(['replay', '-x'])).err.split('\n')[0]).to.equal('rxkube replay: unknown option -x');
  });

  it('suggests the command for a misspelt one, and nothing for a word unlike any', async () => {
    const manifest = await cli(['manifest', 'x.ts']);
    expect(manifest.code).to.equal(2);
    expect(manifest.err.split('\n')[0]).to.equal('rxkube: unknown command "manifest" (did you mean manifests?)');
    expect((await cli(['replya'])).err.split('\n')[0]).to.equal('rxkube: unknown command "replya" (did you mean replay?)');
    expect((await cli(['frobnicate'])).err.split('\n')[0]).to.equal('rxkube: unknown command "frobnicate"');
  });

  it('closest: a prefix of exactly one candidate, else the fewest edits within bounds, a swap counting as one', () => {
    expect(closest('--name', ['--namespace', '--image'])).to.equal('--namespace');
    expect(closest('--re', ['--replicas', '--reconcile'])).to.equal(undefined);
    expect(closest('--imgae', ['--image', '--namespace'])).to.equal('--image');
    expect(closest('--cpus', ['--cpu', '--memory'])).to.equal('--cpu');
    expect(closest('--memroy', ['--cpu', '--memory'])).to.equal('--memory');
    expect(closest('ab', ['xy'])).to.equal(undefined);
    expect(closest('', ['--port'])).to.equal(undefined);
  });
});
