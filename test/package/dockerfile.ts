import { cp, mkdir, readFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { sh } from './packaging.js';

/**
 * The steps of a Dockerfile, run without Docker: each stage in a folder of
 * its own standing for its root filesystem, WORKDIR and COPY as folders and
 * copies, RUN through `sh` in the stage's working directory. Enough of the
 * format for the repository's Dockerfile (FROM … AS, WORKDIR, COPY
 * [--from], RUN, ENV, ENTRYPOINT and CMD in exec form); anything else it
 * refuses, so a Dockerfile it cannot follow fails the test, not silently.
 */

/** What the last stage would start: where, with which environment, which command. */
export interface BuiltImage {
  workdir: string;
  env: Record<string, string>;
  entrypoint: string[];
  cmd: string[];
}

interface Instruction {
  keyword: string;
  args: string;
}

export function instructions(text: string): Instruction[] {
  const lines = text.replace(/\\\n/g, ' ').split('\n');
  return lines
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [keyword = '', ...rest] = line.split(/\s+/);
      return { keyword: keyword.toUpperCase(), args: rest.join(' ') };
    });
}

function pathIn(stageRoot: string, cwd: string, path: string): string {
  return isAbsolute(path) ? join(stageRoot, path) : join(cwd, path);
}

/**
 * RUN steps whose result the caller already has, by their exact text: in
 * place of running the step, the function puts that result into the
 * step's working directory. A step given here that the Dockerfile does not
 * have (any more) fails the build, so that a changed Dockerfile is
 * followed, not skipped.
 */
export type Prebuilt = ReadonlyMap<string, (cwd: string) => Promise<void>>;

/** Builds the Dockerfile at `dockerfile` with `context` as the build context, in `into`; `env` is the host's environment for RUN. */
export async function buildWithoutDocker(dockerfile: string, context: string, into: string, env: NodeJS.ProcessEnv, prebuilt: Prebuilt = new Map()): Promise<BuiltImage> {
  const unused = new Set(prebuilt.keys());
  const stages = new Map<string, string>();
  let stageRoot = '';
  let cwd = '';
  let stageEnv: Record<string, string> = {};
  let entrypoint: string[] = [];
  let cmd: string[] = [];
  for (const { keyword, args } of instructions(await readFile(dockerfile, 'utf8'))) {
    switch (keyword) {
      case 'FROM': {
        const name = /\sAS\s+(\S+)$/i.exec(args)?.[1] ?? `stage${stages.size}`;
        stageRoot = join(into, name);
        cwd = stageRoot;
        stageEnv = {};
        stages.set(name, stageRoot);
        await mkdir(stageRoot, { recursive: true });
        break;
      }
      case 'WORKDIR':
        cwd = pathIn(stageRoot, cwd, args);
        await mkdir(cwd, { recursive: true });
        break;
      case 'ENV': {
        const [name, ...value] = args.split('=');
        stageEnv[name as string] = value.join('=');
        break;
      }
      case 'COPY': {
        const words = args.split(/\s+/);
        const from = words[0]?.startsWith('--from=') ? (words.shift() as string).slice('--from='.length) : undefined;
        const dest = pathIn(stageRoot, cwd, words.pop() as string);
        const base = from === undefined ? context : stages.get(from);
        if (base === undefined) throw new Error(`COPY --from=${from ?? ''}: no such stage`);
        const intoDir = words.length > 1 || dest.endsWith('/') || words[0] === '.';
        for (const source of words) {
          await cp(join(base, source), intoDir ? join(dest, source === '.' ? '' : (source.split('/').pop() as string)) : dest, { recursive: true });
        }
        break;
      }
      case 'RUN': {
        const result = prebuilt.get(args);
        unused.delete(args);
        await (result !== undefined ? result(cwd) : sh(args, cwd, { ...env, ...stageEnv }, 600_000));
        break;
      }
      case 'ENTRYPOINT':
        entrypoint = JSON.parse(args) as string[];
        break;
      case 'CMD':
        cmd = JSON.parse(args) as string[];
        break;
      case 'ARG':
      case 'USER':
      case 'EXPOSE':
        break; // no meaning without a container
      default:
        throw new Error(`Dockerfile: ${keyword} is not something this test can follow`);
    }
  }
  if (unused.size > 0) throw new Error(`Dockerfile: no step RUN ${[...unused].join(', nor RUN ')}, whose result the test supplies: follow the Dockerfile as it is now`);
  return { workdir: cwd, env: stageEnv, entrypoint, cmd };
}

/** `.dockerignore`'s patterns (names and `*` globs, matched on any leading part of a path) as a filter of paths. */
export function dockerignore(text: string): (path: string) => boolean {
  const patterns = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((p) => new RegExp(`^${p.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')}(/|$)`));
  return (path) => !patterns.some((re) => re.test(path) || re.test(path.split('/').pop() as string));
}
