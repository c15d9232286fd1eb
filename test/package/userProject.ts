import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { codeBlocks, type CodeBlock } from '../support/markdown.js';
import { cleanClone, root, sh, userEnv } from './packaging.js';

/**
 * The user's path as a test harness: rxkube packed from a clean clone
 * (`npm pack`, whose prepack builds dist/), and a new project that follows
 * the README's quickstart with the tarball in place of the registry's
 * rxkube (its install commands, its tsconfig.json and files); and beside
 * it, made the same way from the same tarball, the project of
 * docs/tutorial.md. One pack per mocha run and one install per project,
 * shared by every test that imports this module; the folder is removed
 * after the run.
 *
 * Tests that change the project (add a file, install tsx) do so in ways the
 * others tolerate: a file of their own, one more dev dependency.
 */

/** The rxkube tarball and the project that installed it. */
export interface UserProject {
  /** The project's folder. */
  dir: string;
  /** The packed tarball. */
  tarball: string;
  /** The paths the tarball holds. */
  packed: string[];
  /** The code blocks of the page the project follows (the README's quickstart, or the tutorial), as the harness read them. */
  blocks: CodeBlock[];
  /** A user's shell environment (no npm script variables, no KUBECONFIG of the caller). */
  env: NodeJS.ProcessEnv;
  /** Runs `command` in the project as its user types it; fails with its output unless it exits 0. */
  sh(command: string, timeout?: number): Promise<string>;
  /** Runs `command` in the project to its end, whatever its exit code. */
  run(command: string, env?: NodeJS.ProcessEnv): Promise<Finished>;
  /** Starts `command` in the project and returns at once: for a command that runs until stopped. */
  start(command: string, env?: NodeJS.ProcessEnv): Started;
}

/** How a command ended. */
export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A command still running: what it wrote so far, how to stop it, and how it ends. */
export interface Started {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /**
   * Sends `signal` to the command's whole process group: npx (npm 11)
   * forwards no signal to the command it runs, so a signal to npx alone
   * would leave the command running. Does nothing once it has ended.
   */
  kill: (signal: NodeJS.Signals) => void;
  /** Settles once every process of the command has closed its output: the command itself ended, not only npx. */
  exited: Promise<Finished>;
}

/** `npm install` as the harness runs it: from the local cache where it can, and quietly. */
export const npmInstall = 'npm install --prefer-offline --no-audit --no-fund';

function started(command: string, cwd: string, env: NodeJS.ProcessEnv): Started {
  // A process group of its own, so that kill() reaches the command under npx.
  const child = spawn('sh', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  let closed = false;
  const exited = new Promise<Finished>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      closed = true;
      resolve({ code, signal, stdout, stderr });
    });
  });
  const kill = (signal: NodeJS.Signals): void => {
    if (closed || child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  };
  return { child, stdout: () => stdout, stderr: () => stderr, kill, exited };
}

async function pack(into: string, env: NodeJS.ProcessEnv): Promise<{ tarball: string; packed: string[] }> {
  const clone = join(into, 'rxkube');
  await cleanClone(clone);
  const out = await sh(`npm pack --pack-destination ${JSON.stringify(into)} --json`, clone, env);
  const [{ filename, files }] = JSON.parse(out.slice(out.indexOf('['), out.lastIndexOf(']') + 1)) as [{ filename: string; files: { path: string }[] }];
  return { tarball: join(into, filename), packed: files.map((f) => f.path) };
}

/** The README's user guide: from its heading (the developers' commands sit above it) to the developers' section. */
async function quickstartBlocks(): Promise<CodeBlock[]> {
  const readme = await readFile(join(root, 'README.md'), 'utf8');
  return codeBlocks('README.md', readme.slice(readme.indexOf('\n## Use rxkube in your project'), readme.indexOf('\n## Working on rxkube itself')));
}

/** The run's one tarball: packed on first use, in the folder every project of the run is made in. */
export interface Packed {
  folder: string;
  tarball: string;
  packed: string[];
  env: NodeJS.ProcessEnv;
}

let folder: string | undefined;
let packing: Promise<Packed> | undefined;

/** The run's rxkube tarball, packed from a clean clone on first use, then shared (the user projects install it). */
export function packedOnce(): Promise<Packed> {
  packing ??= mkdtemp(join(tmpdir(), 'rxkube-user-')).then(async (dir) => {
    folder = dir;
    const env = userEnv();
    return { folder: dir, env, ...(await pack(dir, env)) };
  });
  return packing;
}

/**
 * A new project in `name` under the run's folder, made as a page says: the
 * install commands of its first sh block (which must install rxkube), in
 * their order, with the tarball in place of the registry's rxkube, then
 * its `file=` blocks written out.
 */
async function makeProject(name: string, source: string, blocks: CodeBlock[], files: CodeBlock[]): Promise<UserProject> {
  const { folder: dir, tarball, packed, env } = await packedOnce();
  const app = join(dir, name);
  await mkdir(app);
  const [install] = blocks.filter((b) => b.language === 'sh');
  if (install === undefined || !install.code.includes('npm install rxkube ')) throw new Error(`the first sh block of ${source} is not its install commands:\n${install?.code ?? '(none)'}`);
  for (const line of install.code.split('\n').filter((l) => l.trim() !== '')) {
    await sh(line.replace(/\bnpm install rxkube\b/, `npm install ${JSON.stringify(tarball)}`).replace(/\bnpm install\b/, npmInstall), app, env);
  }
  for (const block of files) {
    await mkdir(dirname(join(app, block.file as string)), { recursive: true });
    await writeFile(join(app, block.file as string), block.code);
  }
  return {
    dir: app,
    tarball,
    packed,
    blocks,
    env,
    sh: (command, timeout) => sh(command, app, env, timeout),
    run: (command, extra = {}) => started(command, app, { ...env, ...extra }).exited,
    start: (command, extra = {}) => started(command, app, { ...env, ...extra }),
  };
}

let project: Promise<UserProject> | undefined;
let tutorial: Promise<UserProject> | undefined;

/** The run's user project, made on first use (a pack and an install: a minute or two), then shared. */
export function userProject(): Promise<UserProject> {
  project ??= quickstartBlocks()
    .then((blocks) => makeProject('my-controller', 'README.md', blocks, blocks.filter((b) => b.file !== undefined)))
    .then((made) => {
      // Its install (half a minute of unpacking) overlaps the tests that come before the tutorial's; a failure is the tutorial test's to report.
      if (tutorialWanted) tutorialProject().catch(() => undefined);
      return made;
    });
  return project;
}

let tutorialWanted = false;

/**
 * Says, as a test file loads, that the run will use the tutorial's
 * project: it is then made in the background as soon as the user project
 * is (one install after the other, not both at once).
 */
export function wantTutorialProject(): void {
  tutorialWanted = true;
}

/**
 * The project of docs/tutorial.md, made on first use beside the user
 * project, from the same tarball: the tutorial's install commands, the
 * README quickstart's tsconfig.json (as the tutorial says), and the
 * tutorial's files. `blocks` are the tutorial's code blocks.
 */
export function tutorialProject(): Promise<UserProject> {
  tutorial ??= Promise.all([readFile(join(root, 'docs/tutorial.md'), 'utf8'), quickstartBlocks()]).then(([page, quickstart]) => {
    const blocks = codeBlocks('docs/tutorial.md', page);
    const tsconfig = quickstart.filter((b) => b.file === 'tsconfig.json');
    if (tsconfig.length !== 1) throw new Error('the README quickstart has no tsconfig.json block for the tutorial to use');
    return makeProject('webapp-operator', 'docs/tutorial.md', blocks, [...tsconfig, ...blocks.filter((b) => b.file !== undefined)]);
  });
  return tutorial;
}

// A root hook: registered once, as this module loads, and run after the last test of the run.
after(async () => {
  await tutorial?.catch(() => undefined); // an install still under way would write into the folder being removed
  if (folder !== undefined) await rm(folder, { recursive: true, force: true });
});
