import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KindNames } from './names.js';

/**
 * The project template, `templates/project/` in the package: real files,
 * type-checked and linted with rxkube's own sources, for one kind named
 * `Widget` (singular `widget`, plural `widgets`) in the group
 * `example.com`. Scaffolding copies them with those names replaced.
 * Same path from `src/scaffold/` and `dist/scaffold/`.
 */
export const templateRoot = fileURLToPath(new URL('../../templates/project/', import.meta.url));

/** The template's folder of one kind: what `create api` copies. */
export const kindFolder = join('src', 'widget');

/** Files npm would not pack under their real names (it drops `.gitignore`), kept without their dot. */
const dotted: Readonly<Record<string, string>> = { gitignore: '.gitignore', dockerignore: '.dockerignore' };

/** One file to write: its path in the new project and its text. */
export interface ScaffoldFile {
  path: string;
  text: string;
}

/** What the template's names become. */
export interface Substitution {
  names: KindNames;
  group: string;
  /** The project's name (package.json's, the README's title). */
  project: string;
}

/** `text` with the template's names replaced: the plural before the singular it begins with, and the group where GROUP is set. */
export function substitute(text: string, { names, group, project }: Substitution): string {
  return text
    .replace(/export const GROUP = 'example\.com';/g, `export const GROUP = '${group}';`)
    .replace(/\{\{project\}\}/g, project)
    .replace(/\{\{group\}\}/g, group)
    .replace(/Widget/g, names.kind)
    .replace(/widgets/g, names.plural)
    .replace(/widget/g, names.singular);
}

/** The template's files below `under` (all of them by default), read and substituted, with their paths in the new project. */
export async function templateFiles(substitution: Substitution, under = ''): Promise<ScaffoldFile[]> {
  const from = join(templateRoot, under);
  const entries = await readdir(from, { recursive: true, withFileTypes: true });
  const files: ScaffoldFile[] = [];
  for (const entry of entries.filter((e) => e.isFile())) {
    const source = join(entry.parentPath, entry.name);
    const path = relative(templateRoot, source)
      .split(sep)
      .map((part) => substitute(dotted[part] ?? part, substitution))
      .join('/');
    files.push({ path, text: substitute(await readFile(source, 'utf8'), substitution) });
  }
  return files.sort((a, b) => a.path.localeCompare(b.path));
}
