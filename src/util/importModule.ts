import { pathToFileURL } from 'node:url';

/**
 * Loading the user's module that a CLI command names (`rxkube manifests
 * x.ts`, `rxkube run x.ts`, `rxkube replay … --reconcile x.ts`): one loader
 * for all of them, so that they load TypeScript alike.
 */

/** A `.ts` module, no loader for TypeScript in the process yet, and tsx not installed to be one. */
export class TypeScriptLoaderMissing extends Error {
  override readonly name = 'TypeScriptLoaderMissing';
}

/**
 * Imports the module at the absolute path `file`. A TypeScript module, when
 * the process has no loader for it (a built rxkube under plain node), loads
 * through tsx's `register()`, which installs tsx **for the whole process**,
 * from then on: every later import of a `.ts` file goes through it. Only the
 * CLI commands call this, never the library at run time, so that is the
 * command's process deciding for itself. Not tsx's scoped `tsImport`: it
 * would load the module's own second copy of rxkube, whose `KubeApiError`
 * the module's `isNotFound` would then not recognize in errors of the
 * command's client. tsx is imported only here, when needed: a JavaScript
 * module needs no tsx installed.
 *
 * Throws `TypeScriptLoaderMissing` when tsx is needed and not installed;
 * whatever the module throws as it loads, as it threw it.
 */
export async function importModule(file: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(file).href;
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (err) {
    if ((err as { code?: string }).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw err;
  }
  let register: () => unknown;
  try {
    ({ register } = (await import('tsx/esm/api')) as { register: () => unknown });
  } catch (err) {
    throw new TypeScriptLoaderMissing(`${file} is TypeScript, and loading it needs tsx`, { cause: err });
  }
  register();
  return (await import(url)) as Record<string, unknown>;
}
