import { expect } from 'chai';
import { CrdTypesError, crdTypes } from '../../src/deploy/crdTypes.js';
import { shapesCrd } from './crdTypes.fixture.js';

/** The text `rxkube types` writes for the schema shapes other generators get wrong (the corpus test compiles it). */
describe('crdTypes: TypeScript from a CRD\'s schema', () => {
  const [v1, v2, ...more] = crdTypes(shapesCrd);
  const text = v1?.text ?? '';
  /** The body of one declared interface. */
  const body = (name: string): string => {
    const start = text.indexOf(`export interface ${name} {\n`);
    expect(start, `interface ${name}`).to.be.at.least(0);
    return text.slice(start, text.indexOf('\n}\n', start) + 3);
  };

  it('writes one file per served version, named <group>/<version>/<Kind>.ts, and none for a version no longer served', () => {
    expect(more).to.deep.equal([]);
    expect([v1?.path, v2?.path]).to.deep.equal(['shapes.example.com/v1/Widget.ts', 'shapes.example.com/v2/Widget.ts']);
    expect(v2?.text).to.contain('apiVersion: "shapes.example.com/v2";').and.to.contain('size?: number;').and.not.to.contain('name: string');
  });

  it('gives the object literal apiVersion and kind, rxkube\'s ObjectMeta, required members without ?, and a WatchedResource constant', () => {
    expect(text).to.contain("import type { ObjectMeta, WatchedResource } from 'rxkube';");
    expect(body('Widget')).to.match(/^export interface Widget \{\n {2}apiVersion: "shapes\.example\.com\/v1";\n {2}kind: "Widget";\n {2}metadata: ObjectMeta;\n/);
    expect(body('Widget')).to.contain('  spec: WidgetSpec;\n').and.to.contain('  status?: WidgetStatus;\n');
    expect(text).to.contain('export const WidgetResource = { group: "shapes.example.com", version: "v1", resource: "widgets", kind: "Widget" } as const satisfies WatchedResource;');
    // A member whose type name would be the constant's gets the next free name instead.
    expect(body('Widget')).to.contain('  resource?: WidgetResource2;\n');
  });

  it('types int-or-string as number | string, in arrays and maps too', () => {
    expect(body('WidgetSpec')).to.contain('  port?: number | string;\n').and.to.contain('  quantity?: number | string;\n').and.to.contain('  ports?: Array<number | string>;\n');
  });

  it('types enums as unions of literals, escaped: strings with quotes, backslashes and newlines, numbers, booleans, and null', () => {
    const spec = body('WidgetSpec');
    expect(spec).to.contain('  mode?: "Fast" | "it\'s \\"quoted\\"" | "back\\\\slash" | "new\\nline" | "*/";\n');
    expect(spec).to.contain('  level?: 1 | 2 | -3;\n').and.to.contain('  flag?: true;\n').and.to.contain('  maybe?: "A" | null;\n');
  });

  it('adds | null for nullable, arrays of arrays of objects as Name[][], maps as Record, kept unknown fields as an index signature', () => {
    const spec = body('WidgetSpec');
    expect(spec).to.contain('  count?: number | null;\n').and.to.contain('  matrix?: WidgetSpecMatrix[][];\n');
    expect(body('WidgetSpecMatrix')).to.equal('export interface WidgetSpecMatrix {\n  x: number;\n  tags?: string[];\n}\n');
    expect(spec).to.contain('  byName?: Record<string, WidgetSpecByName>;\n').and.to.contain('  anything?: Record<string, unknown>;\n').and.to.contain('  labels?: Record<string, string>;\n');
    expect(spec).to.contain('  raw?: { [key: string]: unknown };\n').and.to.contain('  value?: unknown;\n').and.to.contain('  template?: { [key: string]: unknown };\n');
    expect(body('WidgetSpecPartly')).to.equal('export interface WidgetSpecPartly {\n  known?: string;\n  [key: string]: unknown;\n}\n');
    // An object without members or extensions keeps nothing: the server prunes whatever is sent there.
    expect(spec).to.contain('  empty?: { [key: string]: never };\n');
  });

  it('leaves reserved words and Object.prototype\'s names bare, quotes what is no identifier, and names the types of a.b and aB apart', () => {
    const spec = body('WidgetSpec');
    for (const line of ['default?: string;', 'class?: string;', 'constructor?: number;', 'toString?: boolean;', '__proto__?: string;', '"x-dashed"?: string;', '"with space"?: string;', '"9lives"?: string;', '"a.b"?: WidgetSpecAB;', 'aB?: WidgetSpecAB2;']) {
      expect(spec).to.contain(`\n  ${line}\n`);
    }
  });

  it('writes descriptions as JSDoc that a */ cannot end early and whose lines cannot start a tag', () => {
    expect(body('Widget')).to.contain('  /**\n   * The shapes. A comment that tries to end early *\\/ and\n   * \\@returns a tag at the start of a line.\n   */\n  spec: WidgetSpec;');
    expect(text).to.contain('/** A widget, to test the shapes. */\nexport interface Widget {');
    expect(body('WidgetSpec')).to.contain('  /** A reserved word as a name. */\n  default?: string;');
  });

  it('reads a v1beta1 CRD: its one version and its top-level schema', () => {
    const [file, ...rest] = crdTypes({
      apiVersion: 'apiextensions.k8s.io/v1beta1',
      kind: 'CustomResourceDefinition',
      spec: { group: 'old.example.com', version: 'v1alpha1', names: { kind: 'Old', plural: 'olds' }, validation: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { n: { type: 'integer' } } } } } } },
    });
    expect(rest).to.deep.equal([]);
    expect(file?.path).to.equal('old.example.com/v1alpha1/Old.ts');
    expect(file?.text).to.contain('export interface OldSpec {\n  n?: number;\n}');
  });

  it('refuses what is no CRD, or a CRD whose group, kind or version names would make a bad file path, naming the member', () => {
    const crd = (spec: Record<string, unknown>) => ({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'x.example.com' }, spec: { group: 'example.com', names: { kind: 'X', plural: 'xs' }, versions: [{ name: 'v1', served: true }], ...spec } });
    const message = (value: unknown): string => {
      try {
        crdTypes(value);
      } catch (err) {
        expect(err).to.be.instanceOf(CrdTypesError);
        return (err as Error).message;
      }
      throw new Error('no error');
    };
    expect(message({ apiVersion: 'v1', kind: 'ConfigMap' })).to.equal('not a CustomResourceDefinition (apiVersion apiextensions.k8s.io/v1, kind CustomResourceDefinition)');
    expect(message(crd({ group: '../../etc' }))).to.equal('CustomResourceDefinition x.example.com: spec.group must be a DNS subdomain');
    expect(message(crd({ names: { kind: 'X/Y', plural: 'xs' } }))).to.equal('CustomResourceDefinition x.example.com: spec.names.kind must be a kind name (letters and digits)');
    expect(message(crd({ names: { kind: 'X' } }))).to.equal('CustomResourceDefinition x.example.com: spec.names.plural must be a non-empty string');
    expect(message(crd({ versions: [{ name: '../v1' }] }))).to.equal('CustomResourceDefinition x.example.com: spec.versions must be a list of versions, each named as a DNS label');
    // A version without a schema keeps whatever it is given.
    expect(crdTypes(crd({}))[0]?.text).to.contain('  metadata: ObjectMeta;\n  [key: string]: unknown;\n}');
  });
});
