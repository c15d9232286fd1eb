import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/**
 * Issue 37's promise for the podautoscaler and gitsync examples: their
 * objects are typed by their custom resources' definitions and by
 * `rxkube/kinds`, with no cast to an object type and no interface of their
 * own for a kind. The type checker cannot see this (a cast is what silences
 * it), so this reads the examples' syntax trees.
 */

const root = new URL('../../', import.meta.url).pathname;
const examples = ['examples/podautoscaler', 'examples/gitsync'];

function parse(file: string, text = readFileSync(join(root, file), 'utf8')): ts.SourceFile {
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
}

/** The names a module exports as types only (`export type { A, B } from …`). */
function exportedTypeNames(file: string): string[] {
  const names: string[] = [];
  for (const statement of parse(file).statements) {
    if (ts.isExportDeclaration(statement) && statement.isTypeOnly && statement.exportClause && ts.isNamedExports(statement.exportClause)) {
      names.push(...statement.exportClause.elements.map((e) => e.name.text));
    }
  }
  return names;
}

/** The type aliases a module declares (`export type PodAutoscaler = ObjectOf<…>`). */
function typeAliasNames(file: string): string[] {
  return parse(file).statements.filter(ts.isTypeAliasDeclaration).map((d) => d.name.text);
}

/** The types of objects: any object, a store of them, a built-in kind, the examples' own. */
const objectTypes = new Set([
  'KubeObject',
  'Lister',
  ...exportedTypeNames('src/kinds/index.ts'),
  ...examples.flatMap((folder) => typeAliasNames(`${folder}/types.ts`)),
]);

function referencedTypes(node: ts.Node): string[] {
  const names: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isTypeReferenceNode(n)) names.push(n.typeName.getText());
    ts.forEachChild(n, visit);
  };
  visit(node);
  return names;
}

/** Each cast to an object type, and each interface that describes objects by hand, as `file:line: text`. */
function untypedObjects(source: ts.SourceFile): string[] {
  const found: string[] = [];
  const report = (node: ts.Node, what: string): void => {
    const { line } = source.getLineAndCharacterOfPosition(node.getStart());
    found.push(`${source.fileName}:${line + 1}: ${what}: ${node.getText().replace(/\s+/g, ' ').slice(0, 100)}`);
  };
  const visit = (node: ts.Node): void => {
    if ((ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) && referencedTypes(node.type).some((n) => objectTypes.has(n))) {
      report(node, 'cast to an object type');
    }
    if (ts.isInterfaceDeclaration(node)) {
      // What it extends, not the type arguments of that (`Partial<ControllerOptions<PodAutoscaler>>` describes no object).
      const extendsObject = (node.heritageClauses ?? []).some((clause) => clause.types.some((t) => objectTypes.has(t.expression.getText())));
      const hasMetadata = node.members.some((m) => m.name !== undefined && m.name.getText() === 'metadata');
      if (extendsObject || hasMetadata) report(node.name, 'hand-written object interface');
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the podautoscaler and gitsync examples type their objects from their definitions and rxkube/kinds (issue 37)', () => {
  it('knows the object types it looks for: KubeObject, the built-in kinds and the examples\' own', () => {
    for (const name of ['KubeObject', 'Lister', 'Deployment', 'MutatingWebhookConfiguration', 'PodAutoscaler', 'PodAutoscalerV2', 'Application']) {
      expect(objectTypes.has(name), name).to.equal(true);
    }
  });

  it('finds casts to object types and hand-written object interfaces where there are some', () => {
    const sample = parse(
      'sample.ts',
      [
        'interface DeploymentLike extends KubeObject { spec?: { replicas?: number } }',
        'interface Thing { metadata: { name: string } }',
        'interface Options extends Partial<ControllerOptions<PodAutoscaler>> { namespace?: string }',
        'const a = ctx.stores[name] as Lister<PodAutoscaler> | undefined;',
        'const b = object as unknown as KubeObject;',
        'const c = pa.spec as Partial<PodAutoscaler["spec"]>;',
        'const d = <Deployment>live;',
        'const fine = [1] as const;',
        'const alsoFine = (err as Error).message;',
      ].join('\n'),
    );
    expect(untypedObjects(sample).map((line) => line.split(': ')[0])).to.deep.equal([
      'sample.ts:1',
      'sample.ts:2',
      'sample.ts:4',
      'sample.ts:5',
      'sample.ts:6',
      'sample.ts:7',
    ]);
  });

  for (const folder of examples) {
    it(`${folder}: no cast to an object type and no hand-written interface of a kind`, () => {
      const files = readdirSync(join(root, folder)).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
      expect(files).to.include('types.ts');
      expect(files.flatMap((f) => untypedObjects(parse(`${folder}/${f}`)))).to.deep.equal([]);
    });
  }
});
