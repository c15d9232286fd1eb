import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { crdTypes } from '../../src/deploy/crdTypes.js';
import type { Manifest } from '../integration/crdCorpus.data.js';
import { shapesCrd } from './crdTypes.fixture.js';

/**
 * `rxkube types` over real CRDs: every CRD of test/data/crds (the API
 * server's corpus) and test/data/crd-types (KubeRay, Argo CD,
 * prometheus-operator), each project's valid examples assigned to the
 * generated types, and a few objects the schemas refuse, which must not
 * type-check. One strict `tsc` run over all of it.
 */

const run = promisify(execFile);
const root = new URL('../..', import.meta.url).pathname;
const corpora = ['test/data/crds', 'test/data/crd-types'];

async function yamlFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true }).catch(() => []);
  return entries.filter((e) => e.isFile() && /\.ya?ml$/.test(e.name)).map((e) => join(e.parentPath, e.name)).sort();
}

async function objectsIn(file: string): Promise<Record<string, unknown>[]> {
  return parseAllDocuments(await readFile(file, 'utf8'))
    .map((d) => d.toJS() as unknown)
    .filter((o): o is Record<string, unknown> => typeof o === 'object' && o !== null);
}

/** What the generated types of one API server's CRDs hold: `apiVersion kind` → the module and the interface. */
type Kinds = Map<string, { module: string; kind: string }>;

interface Build {
  files: string[];
  crds: number;
  typeFiles: number;
  examples: number;
  skipped: number;
  exceptions: number;
}

/** A project's manifest, with the examples that do not type-check as written and why. */
type TypesManifest = Manifest & { typeExceptions?: Record<string, string> };

/** Writes one server's types and one module per valid example; returns what it wrote. */
async function writeServer(dir: string, project: string, manifest: TypesManifest, server: Manifest['servers'][number], build: Build, index: number): Promise<Kinds> {
  const kinds: Kinds = new Map();
  const out = join(dir, 'types', project.replaceAll('/', '_'), String(index));
  for (const folder of server.crds) {
    for (const file of await yamlFiles(join(root, project, folder))) {
      for (const object of await objectsIn(file)) {
        if (object.kind !== 'CustomResourceDefinition') continue;
        build.crds++;
        for (const generated of crdTypes(object)) {
          const path = join(out, generated.path);
          await mkdir(dirname(path), { recursive: true });
          await writeFile(path, generated.text);
          build.files.push(path);
          build.typeFiles++;
          const [group, version, name] = generated.path.replace(/\.ts$/, '').split('/') as [string, string, string];
          kinds.set(`${group}/${version} ${name}`, { module: path, kind: name });
        }
      }
    }
  }
  const invalid = new Set(Object.keys(manifest.invalid));
  const exceptions = manifest.typeExceptions ?? {};
  for (const folder of server.valid) {
    for (const file of await yamlFiles(join(root, project, folder))) {
      if (invalid.has(relative(join(root, project), file))) continue;
      for (const [n, object] of (await objectsIn(file)).entries()) {
        const target = kinds.get(`${String(object.apiVersion)} ${String(object.kind)}`);
        if (target === undefined) {
          build.skipped++;
          continue;
        }
        const path = join(dir, 'examples', project.replaceAll('/', '_'), String(index), `${relative(join(root, project), file).replace(/\W/g, '_')}_${n}.ts`);
        await mkdir(dirname(path), { recursive: true });
        // A known exception must still fail, so that it goes when what it waits for comes.
        const exception = exceptions[relative(join(root, project), file)];
        await writeFile(path, exampleModule(path, target, object, `${relative(root, file)} #${n}`, exception));
        build.files.push(path);
        if (exception === undefined) build.examples++;
        else build.exceptions++;
      }
    }
  }
  return kinds;
}

/** A module that assigns `object` to its generated type; one line per object, so that an error names its line. */
function exampleModule(path: string, target: { module: string; kind: string }, object: unknown, origin: string, expectError?: string): string {
  const from = relative(dirname(path), target.module).replace(/\.ts$/, '.js');
  return [
    `// ${origin}`,
    `import type { ${target.kind} } from '${from.startsWith('.') ? from : `./${from}`}';`,
    ...(expectError === undefined ? [] : [`// @ts-expect-error ${expectError}`]),
    `export const example: ${target.kind} = ${JSON.stringify(object)};`,
    '',
  ].join('\n');
}

describe('rxkube types over the real CRDs of test/data', function () {
  this.timeout(180_000);

  it('types every served version of every CRD so that strict tsc compiles them, takes every valid example of each project, and refuses objects the schemas refuse', async () => {
    const dir = await mkdtemp(join(root, '.build-test-crdtypes-'));
    try {
      const build: Build = { files: [], crds: 0, typeFiles: 0, examples: 0, skipped: 0, exceptions: 0 };
      const byProject = new Map<string, Kinds>();
      for (const corpus of corpora) {
        for (const name of (await readdir(join(root, corpus))).sort()) {
          const project = `${corpus}/${name}`;
          const manifest = JSON.parse(await readFile(join(root, project, 'manifest.json'), 'utf8')) as TypesManifest;
          for (const [index, server] of manifest.servers.entries()) byProject.set(`${name} ${index}`, await writeServer(dir, project, manifest, server, build, index));
        }
      }
      // Objects each CRD refuses by its schema alone (an enum, a type, a field it lacks): the types refuse them too.
      const refused: [string, string, (o: Record<string, unknown>) => void, string][] = [
        ['cert-manager 0', 'test/data/crds/cert-manager/invalid/certificate-bad-rotation-policy.yaml', () => undefined, 'rotationPolicy is an enum'],
        ['gateway-api 0', 'test/data/crds/gateway-api/standard/valid/httproute.yaml', (o) => set(o, ['spec', 'rules', 0, 'matches', 0, 'path', 'type'], 'Regexp'), 'path type is an enum'],
        ['prometheus-operator 0', 'test/data/crd-types/prometheus-operator/valid/example-app-service-monitor.yaml', (o) => set(o, ['spec', 'endpoints', 0, 'port'], 8080), 'port is a name (a string)'],
        ['kuberay 0', 'test/data/crd-types/kuberay/valid/ray-cluster.sample.yaml', (o) => set(o, ['spec', 'headGroupSpec', 'template', 'spec', 'containers', 0, 'ports', 0, 'containerPortt'], 1), 'a field the schema lacks'],
        ['argo-cd 0', 'test/data/crd-types/argo-cd/valid/project.yaml', (o) => set(o, ['spec', 'sourceRepos'], 'one'), 'sourceRepos is a list'],
      ];
      for (const [server, file, mutate, why] of refused) {
        const [object] = (await objectsIn(join(root, file))).filter((o) => o.kind !== undefined && byProject.get(server)?.has(`${String(o.apiVersion)} ${String(o.kind)}`));
        expect(object, `${file} has an object of a generated type`).to.not.equal(undefined);
        mutate(object as Record<string, unknown>);
        const target = byProject.get(server)?.get(`${String(object?.apiVersion)} ${String(object?.kind)}`);
        const path = join(dir, 'refused', `${file.replace(/\W/g, '_')}.ts`);
        await mkdir(dirname(path), { recursive: true });
        await writeFile(path, exampleModule(path, target as { module: string; kind: string }, object, file, why));
        build.files.push(path);
      }
      build.files.push(...(await writeShapes(dir)));
      await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ extends: join(root, 'tsconfig.json'), compilerOptions: { noEmit: true }, include: [], files: build.files }));
      await run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')], { cwd: root, maxBuffer: 64 << 20 }).catch((err: { stdout?: string }) => {
        throw new Error(`generated types or examples do not compile:\n${(err.stdout ?? String(err)).split('\n').slice(0, 60).join('\n')}`);
      });
      // The corpus as it stands: 11 projects, both Gateway API channels.
      expect(build.crds).to.be.at.least(60);
      expect(build.examples).to.be.at.least(300);
      console.log(`      ${build.crds} CRDs, ${build.typeFiles} type files, ${build.examples} examples type-checked, ${build.exceptions} known exceptions, ${build.skipped} objects of kinds no CRD here defines skipped`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/**
 * The types of the shapes fixture and a module of objects: one with every
 * member, and one per rule the types must keep (each must fail to compile).
 */
async function writeShapes(dir: string): Promise<string[]> {
  const files: string[] = [];
  for (const generated of crdTypes(shapesCrd)) {
    const path = join(dir, 'shapes', generated.path);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, generated.text);
    files.push(path);
  }
  const spec = "name: 'n'";
  const widget = (specText: string, apiVersion = 'shapes.example.com/v1'): string => `{ apiVersion: '${apiVersion}', kind: 'Widget', metadata: { name: 'w' }, spec: { ${specText} } }`;
  const every = [
    spec,
    "port: 80, quantity: '1', mode: 'it\\'s \"quoted\"', level: -3, flag: true, maybe: null, count: null",
    "matrix: [[{ x: 1, tags: ['a'] }], []], ports: [1, 'a'], byName: { a: { weight: 1 } }, anything: { a: [1] }, labels: { a: 'b' }",
    "raw: { x: { y: 1 } }, value: [1], partly: { known: 'k', other: 1 }, template: { apiVersion: 'v1', kind: 'Pod' }, empty: {}",
    "default: 'd', class: 'c', constructor: 1, toString: true, 'x-dashed': 'x', 'with space': 's', '9lives': 'l', 'a.b': { c: 'c' }, aB: { d: 'd' }",
  ].join(', ');
  const refused: [string, string][] = [
    ['port is a number or a string', `${spec}, port: true`],
    ['mode is an enum', `${spec}, mode: 'Slow'`],
    ['level is an enum of numbers', `${spec}, level: 3`],
    ['name is required', "port: 1"],
    ['name is not nullable', 'name: null'],
    ['an object without members keeps none', `${spec}, empty: { a: 1 }`],
    ['map values are strings', `${spec}, labels: { a: 1 }`],
    ['matrix is an array of arrays', `${spec}, matrix: [{ x: 1 }]`],
    ['x is required in a matrix item', `${spec}, matrix: [[{ tags: [] }]]`],
    ['a field the schema lacks', `${spec}, colour: 'red'`],
  ];
  const path = join(dir, 'shapes', 'objects.ts');
  const lines = [
    "import type { KubeConfig } from '@kubernetes/client-node';",
    "import { controller, type WatchedResource } from 'rxkube';",
    "import { WidgetResource, type Widget } from './shapes.example.com/v1/Widget.js';",
    "import type { Widget as WidgetV2 } from './shapes.example.com/v2/Widget.js';",
    `export const every: Widget = ${widget(every)};`,
    "export const v2: WidgetV2 = { apiVersion: 'shapes.example.com/v2', kind: 'Widget', metadata: {}, spec: { size: 1 } };",
    'export const resource: WatchedResource = WidgetResource;',
    "export const plural: 'widgets' = WidgetResource.resource;",
    // The constant and the interface plug into controller() as the page shows; the store reads Widgets.
    "export const widgets = (kubeConfig: KubeConfig) => controller<Widget>({ name: 'widgets', kubeConfig, for: WidgetResource, reconcile: (_key, ctx) => { const size: number | string | undefined = ctx.object?.spec.port; return size === 0 ? { requeueAfter: 1000 } : undefined; } });",
    ...refused.flatMap(([why, text], n) => [`// @ts-expect-error ${why}`, `export const refused${n}: Widget = ${widget(text)};`]),
    '// @ts-expect-error apiVersion is the version\'s literal',
    `export const otherVersion: Widget = ${widget(spec, 'shapes.example.com/v2')};`,
    '',
  ];
  await writeFile(path, lines.join('\n'));
  files.push(path);
  return files;
}

/** Sets a member deep in a parsed object (the path must exist up to its last step). */
function set(object: Record<string, unknown>, path: (string | number)[], value: unknown): void {
  let node = object as Record<string | number, unknown>;
  for (const step of path.slice(0, -1)) node = node[step] as Record<string | number, unknown>;
  node[path[path.length - 1] as string | number] = value;
}
