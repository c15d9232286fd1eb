import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../src/cli.js';

/**
 * `rxkube init` and `rxkube create api` in process: what they write, and
 * what they refuse (exit code 2, naming it). test/package/init.test.ts
 * installs what they write and runs its tests and main.
 */

interface Ran {
  code: number;
  out: string;
  err: string;
}

async function rxkube(args: string[], cwd: string): Promise<Ran> {
  const out: string[] = [];
  const err: string[] = [];
  const was = process.cwd();
  process.chdir(cwd); // the commands work in the current directory, as a user's shell runs them
  try {
    const code = await runCli(args, { out: (l) => out.push(l), err: (l) => err.push(l), untilStopped: () => new Promise(() => {}) });
    return { code, out: out.join('\n'), err: err.join('\n') };
  } finally {
    process.chdir(was);
  }
}

/** Every file below `dir`, relative, sorted. */
async function filesOf(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1))
    .sort();
}

describe('rxkube init and rxkube create api', () => {
  let dir: string;
  const own = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string; dependencies: Record<string, string> };
  const { version } = own;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rxkube-init-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('init <dir> writes the project, depends on ^<its own version> and the peers, and prints the next steps', async () => {
    const ran = await rxkube(['init', 'demo'], dir);
    expect(ran, ran.err).to.include({ code: 0, err: '' });
    expect(await filesOf(join(dir, 'demo'))).to.deep.equal([
      '.dockerignore',
      '.gitignore',
      'Dockerfile',
      'README.md',
      'package.json',
      'src/api.ts',
      'src/apis.ts',
      'src/main.ts',
      'src/rbac.test.ts',
      'src/until.ts',
      'src/webapp/controller.ts',
      'src/webapp/integration.test.ts',
      'src/webapp/reconcile.test.ts',
      'src/webapp/reconcile.ts',
      'src/webapp/resource.ts',
      'src/webapp/sample.ts',
      'tsconfig.json',
    ]);
    const manifest = JSON.parse(await readFile(join(dir, 'demo/package.json'), 'utf8')) as { name: string; dependencies: Record<string, string>; scripts: Record<string, string> };
    expect(manifest.name).to.equal('demo');
    expect(manifest.dependencies).to.deep.equal({ rxkube: `^${version}`, '@kubernetes/client-node': '~1.4.0', rxjs: '^7.8.0', typebox: own.dependencies.typebox });
    expect(Object.keys(manifest.scripts)).to.have.members(['build', 'start', 'test']);
    expect(ran.out).to.contain('  cd demo\n  npm install\n  npm test').and.to.contain('npm start').and.to.contain('npx rxkube create api <Kind>');
    const tsconfig = JSON.parse(await readFile(join(dir, 'demo/tsconfig.json'), 'utf8')) as { compilerOptions: Record<string, unknown> };
    expect(tsconfig.compilerOptions).to.include({ strict: true, skipLibCheck: false });
  });

  it('replaces every name of the template: no Widget, widget or example.com left with --kind, --group and --rxkube', async () => {
    const ran = await rxkube(['init', 'shop', '--kind', 'Policy', '--group', 'shop.acme.io', '--rxkube', 'file:../rxkube.tgz'], dir);
    expect(ran.code, ran.err).to.equal(0);
    const root = join(dir, 'shop');
    for (const file of await filesOf(root)) {
      expect(await readFile(join(root, file), 'utf8'), file).not.to.match(/widget|example\.com|\{\{/i);
    }
    expect(await readFile(join(root, 'src/policy/resource.ts'), 'utf8'))
      .to.contain("export const GROUP = 'shop.acme.io';")
      .and.to.contain("kind: 'Policy',\n  plural: 'policies',");
    expect((JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies.rxkube).to.equal('file:../rxkube.tgz');
  });

  it('refuses a folder that is not empty, naming it, and writes nothing', async () => {
    await mkdir(join(dir, 'taken'));
    await writeFile(join(dir, 'taken/notes.txt'), 'mine');
    const ran = await rxkube(['init', 'taken'], dir);
    expect(ran.code).to.equal(2);
    expect(ran.err).to.contain('rxkube init: taken is not empty (notes.txt)');
    expect(await filesOf(join(dir, 'taken'))).to.deep.equal(['notes.txt']);
  });

  it('refuses an unknown option with the closest known one, and a missing folder', async () => {
    const misspelt = await rxkube(['init', 'demo', '--rxkub', 'x'], dir);
    expect(misspelt.code).to.equal(2);
    expect(misspelt.err).to.contain('rxkube init: unknown option --rxkub (did you mean --rxkube?)');
    const none = await rxkube(['init'], dir);
    expect(none.code).to.equal(2);
    expect(none.err).to.contain('needs exactly one folder, got none');
    expect(await readdir(dir)).to.deep.equal([]);
  });

  it('refuses a kind kube would refuse, in kube\'s words, and one that is not PascalCase or that the template uses', async () => {
    const refusals: [string, string][] = [
      ['9Lives', 'kind "9Lives": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters'],
      ['A'.repeat(64), 'may have mixed case, but should otherwise match: must be no more than 63 characters'],
      ['webApp', 'kind "webApp": must be PascalCase'],
      ['WidgetList', 'must not end in List'],
      ['Deployment', 'kind "Deployment": the generated code already uses that name'],
    ];
    for (const [kind, message] of refusals) {
      const ran = await rxkube(['init', 'demo', '--kind', kind], dir);
      expect(ran.code, kind).to.equal(2);
      expect(ran.err, kind).to.contain(message);
    }
    const group = await rxkube(['init', 'demo', '--group', 'nodots'], dir);
    expect(group.err).to.contain('group "nodots": should be a domain with at least one dot');
    expect(await readdir(dir)).to.deep.equal([]);
  });

  it('makes the plural by the English rule, and takes --plural where it gets it wrong', async () => {
    expect((await rxkube(['init', 'a', '--kind', 'Policy'], dir)).code).to.equal(0);
    expect(await readFile(join(dir, 'a/src/policy/resource.ts'), 'utf8')).to.contain("kind: 'Policy',\n  plural: 'policies',");
    expect((await rxkube(['init', 'b', '--kind', 'Moose', '--plural', 'moose'], dir)).code).to.equal(0);
    expect(await readFile(join(dir, 'b/src/moose/resource.ts'), 'utf8')).to.contain("kind: 'Moose',\n  plural: 'moose',");
  });

  describe('create api <Kind> in a project of rxkube init', () => {
    let project: string;
    beforeEach(async () => {
      expect((await rxkube(['init', 'demo'], dir)).code).to.equal(0);
      project = join(dir, 'demo');
    });

    it('adds src/<kind>/ with its tests in the project\'s group, and lists it in src/apis.ts', async () => {
      const ran = await rxkube(['create', 'api', 'Database'], project);
      expect(ran, ran.err).to.include({ code: 0, err: '' });
      expect((await filesOf(project)).filter((f) => f.startsWith('src/database/'))).to.deep.equal([
        'src/database/controller.ts',
        'src/database/integration.test.ts',
        'src/database/reconcile.test.ts',
        'src/database/reconcile.ts',
        'src/database/resource.ts',
        'src/database/sample.ts',
      ]);
      const apis = await readFile(join(project, 'src/apis.ts'), 'utf8');
      expect(apis).to.contain("import { webappApi } from './webapp/controller.js';\nimport { databaseApi } from './database/controller.js';\n// rxkube:scaffold:imports");
      expect(apis).to.contain('  webappApi,\n  databaseApi,\n  // rxkube:scaffold:apis');
      expect(await readFile(join(project, 'src/database/resource.ts'), 'utf8')).to.contain("export const GROUP = 'example.com';").and.to.contain("kind: 'Database',\n  plural: 'databases',");
    });

    it('refuses a kind the project has, whatever its case, and one whose plural it serves', async () => {
      const again = await rxkube(['create', 'api', 'Webapp'], project);
      expect(again.code).to.equal(2);
      expect(again.err).to.contain('kind "Webapp": src/webapp exists');
      const plural = await rxkube(['create', 'api', 'Store', '--plural', 'webapps'], project);
      expect(plural.code).to.equal(2);
      expect(plural.err).to.contain('plural "webapps": src/webapp already serves webapps.example.com');
      expect(await readFile(join(project, 'src/apis.ts'), 'utf8')).not.to.contain('store');
    });

    it('refuses to run outside such a project, and anything but api', async () => {
      const outside = await rxkube(['create', 'api', 'Database'], dir);
      expect(outside.code).to.equal(2);
      expect(outside.err).to.contain(`no package.json in ${dir}`);
      const what = await rxkube(['create', 'webhook', 'Database'], project);
      expect(what.code).to.equal(2);
      expect(what.err).to.contain('cannot create "webhook": rxkube create api <Kind> is what it makes');
    });
  });
});
