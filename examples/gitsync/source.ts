import { isManifestFile, parseManifestFile, type Manifest } from './manifests.js';
import { gitdirOf, readFolder, resolveRevision } from './repository.js';
import type { ApplicationSpec, ManifestError } from './types.js';

/** The desired state of an Application: the commit its revision names now, and the objects of its folder there. */
export interface DesiredState {
  /** The full commit id. */
  commit: string;
  manifests: Manifest[];
  /** Files and documents that are no object, and objects named twice. */
  errors: ManifestError[];
}

/**
 * Reads what an Application asks for: resolves its revision to a commit
 * (fetching first when the repository is a URL), reads the `*.yaml`,
 * `*.yml` and `*.json` files of its path there, and parses them. A broken
 * file is an error beside the others' objects, never instead of them; an
 * object named twice (same kind, name) keeps its first file. Throws a
 * `RevisionError` when there is no revision to read at all.
 */
export async function readDesiredState(spec: ApplicationSpec, cacheDir: string, signal?: AbortSignal): Promise<DesiredState> {
  const { gitdir, remote } = await gitdirOf(spec.repoURL, cacheDir, signal);
  const commit = await resolveRevision(gitdir, spec.revision ?? 'HEAD', remote);
  const files = await readFolder(gitdir, commit, spec.path ?? '.', spec.recurse === true, isManifestFile);
  const state: DesiredState = { commit, manifests: [], errors: [] };
  const seen = new Map<string, string>();
  for (const file of files) {
    const parsed = parseManifestFile(file.path, file.text);
    state.errors.push(...parsed.errors);
    for (const manifest of parsed.manifests) {
      const id = identity(manifest.object);
      const first = seen.get(id);
      if (first !== undefined) {
        state.errors.push({ file: manifest.file, message: `${manifest.object.kind ?? ''} ${manifest.object.metadata.name ?? ''} is also in ${first}: the first one counts` });
        continue;
      }
      seen.set(id, manifest.file);
      state.manifests.push(manifest);
    }
  }
  return state;
}

/** What tells two objects of one namespace apart: the API group (not the version), the kind and the name. */
export function identity(object: { apiVersion?: string; kind?: string; metadata: { name?: string } }): string {
  const apiVersion = object.apiVersion ?? '';
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  return `${group}/${object.kind ?? ''}/${object.metadata.name ?? ''}`;
}
