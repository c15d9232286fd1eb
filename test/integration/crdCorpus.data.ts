import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';

/**
 * The CRD corpus of test/data/crds: real CRDs and examples of public projects,
 * each folder with its ORIGIN.json (repository, commit, upstream path of every
 * file) and its manifest.json (which folders one API server gets, which
 * examples must be refused and with what words, and the known exceptions).
 */

export const corpusRoot = new URL('../data/crds/', import.meta.url).pathname;

export interface CorpusObject {
  file: string;
  apiVersion: string;
  kind: string;
  name: string;
  namespace?: string;
  body: Record<string, unknown>;
}

export interface CorpusServer {
  /** The channel or variant ('' when the project has one). */
  name: string;
  crds: string[];
  valid: string[];
  invalid: string[];
}

export interface Exception {
  server: string;
  /** `<file> <Kind>/<name>`, as the test names an object. */
  item: string;
  reason: string;
  /** Work that would lift it (`cel`: the CEL and combinator work of issue 40). */
  needs?: string;
}

export interface Manifest {
  title: string;
  about: string;
  servers: CorpusServer[];
  /** Files whose every object must be refused, with substrings of the refusal. */
  invalid: Record<string, { expect: string[]; note?: string }>;
  exceptions: Exception[];
}

export interface Project {
  dir: string;
  manifest: Manifest;
  origin: { repository: string; ref: string; commit: string; licence: string; files: Record<string, string> };
}

export function projects(): Project[] {
  return readdirSync(corpusRoot)
    .filter((dir) => statSync(join(corpusRoot, dir)).isDirectory())
    .sort()
    .map((dir) => ({
      dir,
      manifest: JSON.parse(readFileSync(join(corpusRoot, dir, 'manifest.json'), 'utf8')) as Manifest,
      origin: JSON.parse(readFileSync(join(corpusRoot, dir, 'ORIGIN.json'), 'utf8')) as Project['origin'],
    }));
}

/** The YAML files under these folders of a project, sorted as `kubectl apply -R` takes them. */
export function yamlFiles(project: Project, folders: string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir).sort()) {
      const path = join(dir, entry);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.ya?ml$/.test(entry)) out.push(relative(join(corpusRoot, project.dir), path));
    }
  };
  for (const folder of folders) walk(join(corpusRoot, project.dir, folder));
  return out;
}

/** Every object of a project's file, in order (empty documents skipped). */
export function objectsOf(project: Project, file: string): CorpusObject[] {
  const text = readFileSync(join(corpusRoot, project.dir, file), 'utf8');
  return parseAllDocuments(text)
    .map((doc) => doc.toJS() as Record<string, unknown> | null)
    .filter((body): body is Record<string, unknown> => body !== null && typeof body === 'object')
    .map((body) => {
      const metadata = (body.metadata ?? {}) as { name?: string; namespace?: string };
      return {
        file,
        apiVersion: String(body.apiVersion),
        kind: String(body.kind),
        name: String(metadata.name),
        namespace: metadata.namespace,
        body,
      };
    });
}

export function itemOf(object: CorpusObject): string {
  return `${object.file} ${object.kind}/${object.name}`;
}

/** `group/Kind` of the kinds a CRD object defines. */
export function definedKind(crd: CorpusObject): string {
  const spec = crd.body.spec as { group: string; names: { kind: string } };
  return `${spec.group}/${spec.names.kind}`;
}

export function groupKind(object: CorpusObject): string {
  const slash = object.apiVersion.indexOf('/');
  return `${slash < 0 ? '' : object.apiVersion.slice(0, slash)}/${object.kind}`;
}
