import { readFile, readdir } from 'node:fs/promises';
import { dirname, join, normalize, relative } from 'node:path';
import ts from 'typescript';

/**
 * The layering rules of ../shared/DESIGN.md's layout table (and
 * docs/ARCHITECTURE.md), as data, and a checker over `src/`'s import graph.
 */

/** One import of one file: where to, and whether only types come through it. */
export interface ImportEdge {
  from: string;
  /** A path below `src/` for relative imports; the module name otherwise. */
  to: string;
  typeOnly: boolean;
}

/** Which part a file of `src/` belongs to. Paths are relative to `src/`. */
export function partOf(file: string): string {
  if (file === 'types.ts' || file === 'logger.ts' || file.startsWith('util/')) return 'core';
  if (file === 'index.ts' || file === 'cli.ts' || file === 'testing/index.ts' || file === 'apiserver/index.ts' || file === 'sinks/webhooks/index.ts' || file === 'kinds/index.ts') return `entry ${file}`;
  const [top, sub] = file.split('/');
  if (top === 'apiserver' && sub === 'auth') return 'apiserver/auth';
  return top === 'sinks' ? `sinks/${sub}` : (top as string);
}

const library = ['sources', 'operators', 'store', 'informers', 'sinks/client', 'sinks/objects', 'sinks/events', 'sinks/metrics', 'sinks/leader', 'sinks/webhooks', 'observe', 'controller'];

/** What each part may import besides `core` (which every part may import). `type:` means type-only imports. */
export const allowed: Readonly<Record<string, readonly string[]>> = {
  core: [],
  // The compact cache: the codec, the interners, the slabs, the spans scanner and the compact object form. No I/O, no clock.
  compact: [],
  sources: ['compact'],
  operators: ['type:store', 'compact'],
  store: ['compact'],
  informers: ['sources', 'operators', 'store'],
  'sinks/client': [],
  'sinks/objects': ['sinks/client'],
  'sinks/events': ['sinks/client'],
  'sinks/metrics': [],
  'sinks/leader': ['sinks/client'],
  'sinks/webhooks': ['sinks/metrics'],
  controller: [...library.filter((p) => p !== 'controller'), 'observe'],
  // What observes a controller: the timeline's types and hub, the live view, the recorder and the reader of recordings.
  // It reads the parts it observes (types, the client's errors, the metrics' listener); nothing in the read or write path imports it.
  observe: ['type:operators', 'type:informers', 'sinks/client', 'type:sinks/events', 'sinks/metrics', 'type:store'],
  // Custom resources defined schema-first: the CRD, and a WatchedResource that carries the objects' type (types only).
  customResources: ['type:controller', 'type:sinks/objects'],
  // From the wiring to a cluster: RBAC derived from a controller's options, its manifests, the CLI commands that print and run them.
  deploy: ['controller', 'sinks/webhooks', 'customResources', 'observe'],
  // New projects from the package's templates (rxkube init, rxkube create api): files and names, no cluster.
  scaffold: ['customResources'],
  // The built-in kinds' resources and object types: data, typed through the controller's `TypedResource`.
  kinds: ['type:controller'],
  apiserver: ['apiserver/auth'],
  // Who may do what: it reads the cluster (storage, registry, selectors), and leaves answering to http/ (types only, see `typesOnlyFrom`).
  'apiserver/auth': ['apiserver'],
  testing: ['*'],
  // The root entry also names the deploy part's definitions and its manifests API (what `rxkube manifests` prints, as objects).
  'entry index.ts': [...library, 'observe', 'deploy', 'customResources'],
  'entry testing/index.ts': ['*'],
  'entry apiserver/index.ts': ['apiserver'],
  'entry sinks/webhooks/index.ts': ['sinks/webhooks'],
  'entry kinds/index.ts': ['kinds'],
  'entry cli.ts': ['*'],
};

/** Packages a part may use; `*` for any. Operators and the store do no I/O: they get RxJS, nothing else. */
const packages: Readonly<Record<string, readonly string[]>> = {
  compact: [],
  operators: ['rxjs'],
  store: ['rxjs'],
};

/** Folders (below `src/`) a part may import types from but nothing else, though its row allows their part. */
const typesOnlyFrom: Readonly<Record<string, readonly string[]>> = {
  'apiserver/auth': ['apiserver/http/'],
};

/** Every violation of the rules among `edges`, one line each. */
export function violations(edges: readonly ImportEdge[]): string[] {
  const out: string[] = [];
  for (const edge of edges) {
    const from = partOf(edge.from);
    const rules = allowed[from];
    if (rules === undefined) {
      out.push(`${edge.from}: in no part of the layout table`);
      continue;
    }
    if (!edge.to.endsWith('.ts')) {
      const pkg = edge.to.startsWith('@') ? edge.to.split('/').slice(0, 2).join('/') : (edge.to.split('/')[0] as string);
      const may = packages[from];
      if (may !== undefined && !may.includes(pkg)) out.push(`${edge.from} imports ${edge.to}: ${from} does no I/O and uses ${may.length > 0 ? `${may.join(', ')} only` : 'no package'}`);
      continue;
    }
    const to = partOf(edge.to);
    const typesOnly = typesOnlyFrom[from]?.find((folder) => edge.to.startsWith(folder));
    if (typesOnly !== undefined && !edge.typeOnly) {
      out.push(`${edge.from} imports ${edge.to}: ${from} may import types only from ${typesOnly}`);
      continue;
    }
    if (to === from || to === 'core' || rules.includes('*') || rules.includes(to)) continue;
    if (edge.typeOnly && rules.includes(`type:${to}`)) continue;
    const hint = rules.includes(`type:${to}`) ? ' (types only)' : '';
    out.push(`${edge.from} imports ${edge.to}: ${from} may not import ${to}${hint}`);
  }
  return out;
}

/** The imports of one source text (static imports and re-exports, and dynamic `import()` of a literal). */
export function importsOf(file: string, text: string): ImportEdge[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const edges: ImportEdge[] = [];
  const add = (specifier: string, typeOnly: boolean): void => {
    const to = specifier.startsWith('.') ? normalize(join(dirname(file), specifier)).replace(/\.js$/, '.ts') : specifier;
    edges.push({ from: file, to, typeOnly });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      add(node.moduleSpecifier.text, typeOnly);
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && ts.isStringLiteral(node.moduleSpecifier)) {
      add(node.moduleSpecifier.text, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      if (arg !== undefined && ts.isStringLiteral(arg)) add(arg.text, false);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return edges;
}

/** Every import of every `.ts` file below `srcDir`, with paths relative to it. */
export async function importGraph(srcDir: string): Promise<ImportEdge[]> {
  const entries = await readdir(srcDir, { withFileTypes: true, recursive: true });
  const edges: ImportEdge[] = [];
  for (const e of entries) {
    if (!e.isFile() || !e.name.endsWith('.ts')) continue;
    const path = join(e.parentPath, e.name);
    edges.push(...importsOf(relative(srcDir, path), await readFile(path, 'utf8')));
  }
  return edges;
}
