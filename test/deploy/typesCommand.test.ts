import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { runCli } from '../../src/cli.js';
import { shapesCrd } from './crdTypes.fixture.js';

/** `rxkube types`: its command line, the files it reads and writes, and its exit codes. */
describe('rxkube types: command line, input and output', function () {
  this.timeout(60_000);
  const root = new URL('../..', import.meta.url).pathname;
  let dir: string;
  let out: string[];
  let err: string[];
  const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l), untilStopped: () => Promise.resolve() };
  const cli = (args: string[]) => runCli(['types', ...args], io);
  const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: 'b' } };
  const gadgets = { ...shapesCrd, metadata: { name: 'gadgets.other.example.com' }, spec: { ...shapesCrd.spec, group: 'other.example.com', names: { kind: 'Gadget', plural: 'gadgets' } } };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rxkube-types-'));
  });
  beforeEach(() => {
    out = [];
    err = [];
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('types every CRD of a multi-document file, skipping other kinds, and prints the files with their paths', async () => {
    const file = join(dir, 'crds.yaml');
    await writeFile(file, [configMap, shapesCrd, gadgets].map((o) => stringify(o)).join('---\n'));
    expect(await cli([file]), err.join('\n')).to.equal(0);
    const printed = out.join('\n');
    expect(printed.match(/^\/\/ \S+\.ts$/gm)).to.deep.equal(['// shapes.example.com/v1/Widget.ts', '// shapes.example.com/v2/Widget.ts', '// other.example.com/v1/Gadget.ts', '// other.example.com/v2/Gadget.ts']);
    expect(printed).to.contain('export interface Gadget {\n  apiVersion: "other.example.com/v1";');
  });

  it('writes the files below --out, readable (0644), and lists them; takes the items of a List', async () => {
    const file = join(dir, 'list.json');
    await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [gadgets] }));
    const target = join(dir, 'out');
    expect(await cli([file, '--out', target]), err.join('\n')).to.equal(0);
    expect(out).to.deep.equal([join(target, 'other.example.com/v1/Gadget.ts'), join(target, 'other.example.com/v2/Gadget.ts')]);
    expect(await readFile(join(target, 'other.example.com/v1/Gadget.ts'), 'utf8')).to.contain('export const GadgetResource = { group: "other.example.com", version: "v1", resource: "gadgets", kind: "Gadget" }');
    expect((await stat(join(target, 'other.example.com/v2/Gadget.ts'))).mode & 0o777).to.equal(0o644);
  });

  it('exits 2 naming the problem: a file without a CRD, a CRD of the wrong shape, a missing file, YAML that does not parse, no file, an unknown option', async () => {
    const none = join(dir, 'none.yaml');
    await writeFile(none, stringify(configMap));
    const bad = join(dir, 'bad.yaml');
    await writeFile(bad, stringify({ ...gadgets, spec: { ...gadgets.spec, group: 'Not/A/Group' } }));
    const broken = join(dir, 'broken.yaml');
    await writeFile(broken, 'kind: [unclosed\n');
    expect(await cli([none])).to.equal(2);
    expect(await cli([bad])).to.equal(2);
    expect(await cli([join(dir, 'missing.yaml')])).to.equal(2);
    expect(await cli([broken])).to.equal(2);
    expect(await cli([])).to.equal(2);
    expect(await cli([none, '--outt', dir])).to.equal(2);
    const hint = '\n(rxkube types --help lists the options)';
    expect(err.slice(0, 2)).to.deep.equal([`rxkube types: ${none} holds no CustomResourceDefinition${hint}`, `rxkube types: ${bad}: CustomResourceDefinition gadgets.other.example.com: spec.group must be a DNS subdomain${hint}`]);
    expect(err[2]).to.match(new RegExp(`^rxkube types: cannot read ${join(dir, 'missing.yaml')}: ENOENT`));
    expect(err[3]).to.match(new RegExp(`^rxkube types: ${broken} is not YAML: `));
    expect(err[4]).to.equal(`rxkube types: needs exactly one file (or - for standard input), got none${hint}`);
    expect(err[5]).to.contain("rxkube types: Unknown option '--outt'");
    expect(out).to.deep.equal([]);
  });

  it('reads standard input for -, through the rxkube command', async () => {
    const child = spawn(process.execPath, [join(root, 'bin/rxkube.js'), 'types', '-'], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
    try {
      const stdout: Buffer[] = [];
      child.stdout.on('data', (c: Buffer) => stdout.push(c));
      const code = new Promise<number | null>((resolve) => child.on('close', resolve));
      child.stdin.end(stringify(gadgets));
      expect(await code).to.equal(0);
      expect(Buffer.concat(stdout).toString()).to.contain('// other.example.com/v1/Gadget.ts\n').and.to.contain('export interface GadgetSpec {');
    } finally {
      child.kill();
    }
  });
});
