import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseCommandLine, UsageError, type CliIo } from '../util/cli.js';
import { writeFiles } from './initCommand.js';
import { checkGroup, kindNames, type KindNames } from './names.js';
import { kindFolder, templateFiles } from './templates.js';

/**
 * `rxkube create api <Kind>`, run in a project `rxkube init` made: adds a
 * second custom resource and its controller, with their marble and
 * integration tests, and lists it in `src/apis.ts`, so that `npm test`
 * (the RBAC test included) and `npm start` take it in, as `kubebuilder
 * create api` adds to `main.go`. Exit codes: 0 written, 2 a bad command
 * line, no such project, or a kind it already has.
 */

export const createUsage = `usage: rxkube create api <Kind> [options]

Run in a project rxkube init made: adds a custom resource <Kind> (PascalCase, such as Database)
and its controller in src/<kind>/, with their marble and integration tests, and lists it in
src/apis.ts, so that npm test (the RBAC test too) and npm start take it in.

options:
  --group <group>     its API group (default: the project's, package.json's rxkube.group)
  --plural <plural>   its plural, when the English rule (policy: policies) gets it wrong
  -h, --help          show this help
`;

const apisFile = join('src', 'apis.ts');
const importsMarker = '// rxkube:scaffold:imports';
const apisMarker = '  // rxkube:scaffold:apis';

/** `text` with `line` inserted before the line that begins with `marker`. */
function insertBefore(text: string, marker: string, line: string): string {
  const at = text.indexOf(`\n${marker}`);
  return `${text.slice(0, at + 1)}${line}\n${text.slice(at + 1)}`;
}

/** The project's group, from package.json's `rxkube.group`; a `UsageError` where cwd holds no project of rxkube init. */
async function projectGroup(cwd: string): Promise<string | undefined> {
  const text = await readFile(join(cwd, 'package.json'), 'utf8').catch(() => undefined);
  if (text === undefined) throw new UsageError(`no package.json in ${cwd}: run rxkube create api in a project that rxkube init made`);
  const group = (JSON.parse(text) as { rxkube?: { group?: unknown } }).rxkube?.group;
  return typeof group === 'string' ? group : undefined;
}

/** Refuses a kind the project has (its folder, or its plural among the kinds' resources). */
async function checkNew(cwd: string, names: KindNames, group: string): Promise<void> {
  if (await stat(join(cwd, 'src', names.singular)).then(() => true, () => false)) {
    throw new UsageError(`kind ${JSON.stringify(names.kind)}: src/${names.singular} exists; the project has that kind already (kinds differing only in case share a folder)`);
  }
  const folders = await readdir(join(cwd, 'src'), { withFileTypes: true });
  for (const folder of folders.filter((f) => f.isDirectory())) {
    const resource = await readFile(join(cwd, 'src', folder.name, 'resource.ts'), 'utf8').catch(() => '');
    if (resource.includes(`plural: '${names.plural}'`) && resource.includes(`GROUP = '${group}'`)) {
      throw new UsageError(`plural ${JSON.stringify(names.plural)}: src/${folder.name} already serves ${names.plural}.${group}`);
    }
  }
}

/** Runs `rxkube create`; returns the exit code. */
export async function createCommand(args: string[], io: CliIo, cwd = process.cwd()): Promise<number> {
  const { values, positionals } = parseCommandLine({
    args,
    options: { group: { type: 'string' }, plural: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    io.out(createUsage);
    return 0;
  }
  const [what, kind, ...more] = positionals;
  if (what !== 'api') throw new UsageError(what === undefined ? 'create what? rxkube create api <Kind>' : `cannot create ${JSON.stringify(what)}: rxkube create api <Kind> is what it makes`);
  if (kind === undefined || more.length > 0) throw new UsageError(`create api needs exactly one kind, got ${kind === undefined ? 'none' : [kind, ...more].map((p) => JSON.stringify(p)).join(' ')}`);
  const names = kindNames(kind, values.plural);
  const group = checkGroup(values.group ?? (await projectGroup(cwd)) ?? 'example.com');
  const apis = await readFile(join(cwd, apisFile), 'utf8').catch(() => undefined);
  if (apis === undefined || !apis.includes(`\n${importsMarker}`) || !apis.includes(`\n${apisMarker}`)) {
    throw new UsageError(`${join(cwd, apisFile)} ${apis === undefined ? 'does not exist' : `has lost its markers (${importsMarker}, ${apisMarker.trim()})`}: run rxkube create api in a project that rxkube init made`);
  }
  await checkNew(cwd, names, group);
  const project = (JSON.parse(await readFile(join(cwd, 'package.json'), 'utf8')) as { name?: string }).name ?? 'operator';
  await writeFiles(cwd, await templateFiles({ names, group, project }, kindFolder));
  const listed = insertBefore(insertBefore(apis, importsMarker, `import { ${names.singular}Api } from './${names.singular}/controller.js';`), apisMarker, `  ${names.singular}Api,`);
  await writeFile(join(cwd, apisFile), listed);
  io.out(`Created src/${names.singular}/: a ${names.kind} custom resource (${names.plural}.${group}) and its controller, with tests, listed in ${apisFile}.

Next:
  npm test        # its tests, and the RBAC test for it too
  npm start       # every controller on an embedded API server, until each sample is Ready
  edit src/${names.singular}/resource.ts (its schema) and src/${names.singular}/reconcile.ts (what it does)`);
  return 0;
}
