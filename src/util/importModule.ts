import { createRequire } from 'node:module';
import { extname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Loading the user's module that a CLI command names (`rxkube manifests
 * x.ts`, `rxkube run x.ts`, `rxkube replay … --reconcile x.ts`): one loader
 * for all of them, so that they load TypeScript alike.
 */

/** A TypeScript module, no loader for TypeScript in the process, and no tsx installed where the module is to be one. */
export class TypeScriptLoaderMissing extends Error {
  override readonly name = 'TypeScriptLoaderMissing';
}

/** The extensions tsx compiles and plain Node 20 refuses. */
const typeScriptExtensions = new Set(['.ts', '.mts', '.cts', '.tsx']);

/**
 * tsx's loader (what `node --import tsx` imports), resolved from where the
 * user's project is: the module's own folder first, then the working
 * directory. Never from rxkube's own dependencies: tsx is no dependency of
 * the package, and a project decides for itself which tsx it runs.
 */
function tsxLoader(file: string): string | undefined {
  for (const from of [file, join(process.cwd(), 'package.json')]) {
    try {
      return createRequire(from).resolve('tsx');
    } catch {
      // not installed there: the next place, or none
    }
  }
  return undefined;
}

/**
 * Imports the module at the absolute path `file`. A JavaScript module is a
 * plain `import()`. A TypeScript module (`.ts`, `.mts`, `.cts`, `.tsx`) is
 * imported as it is when the process can already load TypeScript (the
 * command runs under tsx); otherwise tsx's loader, from the user's project,
 * is registered **for the whole process**, as `node --import tsx` would,
 * and the module imported again. Not tsx's scoped `tsImport`: it would load
 * the module's own second copy of rxkube, whose `KubeApiError` the module's
 * `isNotFound` would then not recognize in errors of the command's client.
 *
 * The second import asks for the module under a URL of its own (a query
 * that names why): Node keeps the failure of the first import of a URL and
 * answers every later import of that URL with it, loader or not. Nothing
 * of the module ran in the failed attempt (Node refused its file before
 * evaluating anything), so it still runs once; the modules it imports have
 * their usual URLs.
 *
 * Throws `TypeScriptLoaderMissing` when tsx is needed and not installed;
 * whatever the module throws as it loads, as it threw it.
 */
export async function importModule(file: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(file).href;
  if (!typeScriptExtensions.has(extname(file))) return (await import(url)) as Record<string, unknown>;
  try {
    return (await import(url)) as Record<string, unknown>;
  } catch (err) {
    // Only this file's extension refused: a module it imports failing the same way is the module's own error.
    if ((err as { code?: string }).code !== 'ERR_UNKNOWN_FILE_EXTENSION' || !(err as Error).message.includes(file)) throw err;
  }
  const loader = tsxLoader(file);
  if (loader === undefined) {
    throw new TypeScriptLoaderMissing(`cannot load ${file}: a TypeScript module needs tsx, which is not installed in its project (npm install --save-dev tsx), or pass the compiled .js module`);
  }
  await import(pathToFileURL(loader).href);
  return (await import(`${url}?rxkube-loaded-with-tsx`)) as Record<string, unknown>;
}
