import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { parseCommandLine, UsageError, type CliIo } from '../util/cli.js';
import { checkGroup, kindNames } from './names.js';
import { packageName, projectFiles, ownVersion } from './projectFiles.js';
import { templateFiles, type ScaffoldFile } from './templates.js';

/**
 * `rxkube init <dir>`: a new operator project that works as it is, as
 * `kubebuilder init` + `create api` give one: a custom resource and its
 * controller (owned Deployment and Service, status conditions, a
 * finalizer), its marble, integration and RBAC tests, a main that runs it
 * on an embedded API server, a Dockerfile and a README. Exit codes: 0
 * written, 2 a bad command line or a folder that is not empty.
 */

export const initUsage = `usage: rxkube init <dir> [options]

Writes a new operator project into <dir>, which must be empty or not exist: a custom resource
and its controller (an owned Deployment and Service, status conditions, a finalizer), its marble,
integration and RBAC tests, src/main.ts that runs it (on an embedded API server unless KUBECONFIG
is set), a Dockerfile and a README. Then: cd <dir> && npm install && npm test && npm start.

options:
  --kind <Kind>       the first custom resource's kind, PascalCase (default WebApp)
  --group <group>     the API group of the project's custom resources (default example.com)
  --plural <plural>   the kind's plural, when the English rule (policy: policies) gets it wrong
  --rxkube <spec>     the rxkube dependency as npm takes it: a range, a tarball, a folder (default ^${ownVersion()})
  -h, --help          show this help
`;

/** Writes `files` below `root`, never over an existing file. */
export async function writeFiles(root: string, files: readonly ScaffoldFile[]): Promise<void> {
  for (const file of files) {
    const path = join(root, file.path);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, file.text, { flag: 'wx' });
  }
}

/** Refuses a target that is a file or a folder with anything in it, naming it. */
async function checkEmpty(dir: string, shown: string): Promise<void> {
  const found = await stat(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  if (found === undefined) return;
  if (!found.isDirectory()) throw new UsageError(`${shown} exists and is not a folder`);
  const entries = await readdir(dir);
  if (entries.length > 0) {
    const listed = entries.slice(0, 5).join(', ') + (entries.length > 5 ? `, and ${entries.length - 5} more` : '');
    throw new UsageError(`${shown} is not empty (${listed}): rxkube init writes a new project into an empty or new folder`);
  }
}

/** Runs `rxkube init`; returns the exit code. */
export async function initCommand(args: string[], io: CliIo, cwd = process.cwd()): Promise<number> {
  const { values, positionals } = parseCommandLine({
    args,
    options: { kind: { type: 'string' }, group: { type: 'string' }, plural: { type: 'string' }, rxkube: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    allowPositionals: true,
    strict: true,
  });
  if (values.help) {
    io.out(initUsage);
    return 0;
  }
  if (positionals.length !== 1) throw new UsageError(`needs exactly one folder, got ${positionals.length === 0 ? 'none' : positionals.map((p) => JSON.stringify(p)).join(' ')}`);
  const names = kindNames(values.kind ?? 'WebApp', values.plural);
  const group = checkGroup(values.group ?? 'example.com');
  if (values.rxkube === '') throw new UsageError('--rxkube needs a dependency spec (a range such as ^0.1.0, or a tarball)');
  const shown = positionals[0] as string;
  const dir = resolve(cwd, shown);
  await checkEmpty(dir, shown);
  const project = packageName(basename(dir));
  const files = [...projectFiles(project, group, values.rxkube), ...(await templateFiles({ names, group, project }))];
  await writeFiles(dir, files);
  const cd = relative(cwd, dir) || '.';
  io.out(`Created ${project} in ${dir}: a ${names.kind} custom resource (group ${group}) and its controller, with tests.

Next:
  cd ${cd}
  npm install
  npm test        # builds, then runs the marble, integration and RBAC tests
  npm start       # runs the controller on an embedded API server until a sample ${names.kind} is Ready (KUBECONFIG set: on that cluster)

Then:
  npx rxkube create api <Kind>                    # another custom resource and its controller, with tests
  npx rxkube manifests dist/${names.singular}/controller.js --image <image>   # what deploys it (see README.md)`);
  return 0;
}
