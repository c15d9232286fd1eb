import { parseAllDocuments } from 'yaml';
import type { KubeObject } from 'rxkube';
import type { ManifestError } from './types.js';

/** One object read from the repository, with the file it came from. */
export interface Manifest {
  file: string;
  object: KubeObject;
}

/** What the files of a revision hold: the objects, and what could not be read as one. */
export interface ParsedFiles {
  manifests: Manifest[];
  errors: ManifestError[];
}

/** Whether a file of the folder is one this controller reads. */
export function isManifestFile(name: string): boolean {
  return /\.(ya?ml|json)$/i.test(name);
}

/**
 * The objects of one file: every document of a YAML file (`---`
 * separated; empty documents skipped), or the value of a JSON file; a
 * `kind: List` stands for its `items`. Whatever is not an object with an
 * `apiVersion`, a `kind` and a `metadata.name` is an error of the file
 * (naming the document when there are several), and the file's other
 * documents still count.
 */
export function parseManifestFile(file: string, text: string): ParsedFiles {
  const out: ParsedFiles = { manifests: [], errors: [] };
  const values: { where: string; value: unknown }[] = [];
  if (/\.json$/i.test(file)) {
    try {
      values.push({ where: '', value: JSON.parse(text) as unknown });
    } catch (err) {
      out.errors.push({ file, message: `not JSON: ${(err as Error).message}` });
    }
  } else {
    const documents = parseAllDocuments(text);
    const all = Array.isArray(documents) ? documents : [documents];
    all.forEach((doc, i) => {
      const where = all.length > 1 ? `document ${i + 1}: ` : '';
      if (doc.errors.length > 0) out.errors.push({ file, message: `${where}not YAML: ${doc.errors[0]?.message.split('\n')[0] ?? 'unreadable'}` });
      else values.push({ where, value: doc.toJS() as unknown });
    });
  }
  for (const { where, value } of values) {
    if (value === null || value === undefined) continue;
    for (const item of listItems(value)) {
      if (isManifest(item)) out.manifests.push({ file, object: item });
      else out.errors.push({ file, message: `${where}${whatIsWrong(item) ?? ''}` });
    }
  }
  return out;
}

function listItems(value: unknown): unknown[] {
  if (Array.isArray(value)) return value;
  const list = value as { kind?: unknown; items?: unknown };
  if (typeof value === 'object' && typeof list.kind === 'string' && list.kind.endsWith('List') && Array.isArray(list.items)) return list.items;
  return [value];
}

/** Whether a value is an object to apply: one `whatIsWrong` finds nothing wrong with. */
function isManifest(value: unknown): value is KubeObject {
  return whatIsWrong(value) === undefined;
}

/** Why a value is no object to apply, or undefined when it is one. */
function whatIsWrong(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return `not an object (${JSON.stringify(value)?.slice(0, 40)})`;
  const o = value as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } };
  if (typeof o.apiVersion !== 'string' || o.apiVersion === '') return 'no apiVersion';
  if (typeof o.kind !== 'string' || o.kind === '') return 'no kind';
  if (typeof o.metadata?.name !== 'string' || o.metadata.name === '') return `${o.kind} without metadata.name`;
  return undefined;
}
