import { readFileSync } from 'node:fs';
import type { ScaffoldFile } from './templates.js';

/**
 * The project's package.json and tsconfig.json, made in code rather than
 * kept as template files: their versions come from the running rxkube's
 * own package.json (its version, its peer dependencies' ranges, its
 * typebox, the
 * TypeScript, @types/node and tsx it is built and tested with), so a new
 * project gets what this rxkube works with.
 */

interface OwnPackage {
  version: string;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

function ownPackage(): OwnPackage {
  return JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as OwnPackage;
}

/** The running rxkube's version. */
export function ownVersion(): string {
  return ownPackage().version;
}

/** A package name npm accepts, from a folder's name: lower case, URL-safe characters, at most 214 of them. */
export function packageName(folder: string): string {
  const name = folder
    .toLowerCase()
    .replace(/[^a-z0-9._~-]+/g, '-')
    .replace(/^[._-]+/, '')
    .slice(0, 214);
  return name === '' || name === 'node_modules' || name === 'favicon.ico' ? 'operator' : name;
}

function range(from: Record<string, string> | undefined, name: string): string {
  const found = from?.[name];
  if (found === undefined) throw new Error(`rxkube's own package.json names no version of ${name}`);
  return found;
}

/** package.json and tsconfig.json of a new project named `name`, depending on rxkube as `rxkubeSpec` says (`^<version>` by default). */
export function projectFiles(name: string, group: string, rxkubeSpec?: string): ScaffoldFile[] {
  const own = ownPackage();
  const manifest = {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    engines: { node: own.engines?.node ?? '>=20.19' },
    scripts: {
      // tsc alone never deletes the output of a deleted source, and node --test would run a deleted test.
      build: 'node -e "fs.rmSync(\'dist\',{recursive:true,force:true})" && tsc',
      start: 'npm run build && node dist/main.js',
      test: 'npm run build && node --test dist/*.test.js dist/*/*.test.js',
    },
    // What `npx rxkube create api` reads: the group of the project's custom resources.
    rxkube: { group },
    dependencies: {
      rxkube: rxkubeSpec ?? `^${own.version}`,
      '@kubernetes/client-node': range(own.peerDependencies, '@kubernetes/client-node'),
      rxjs: range(own.peerDependencies, 'rxjs'),
      // The schema builder the custom resources are defined with (defineCustomResource), as rxkube depends on it.
      typebox: range(own.dependencies, 'typebox'),
    },
    devDependencies: {
      '@types/node': range(own.devDependencies, '@types/node'),
      tsx: range(own.devDependencies, 'tsx'),
      typescript: range(own.devDependencies, 'typescript'),
    },
  };
  const tsconfig = {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      strict: true,
      skipLibCheck: false,
      types: ['node'],
      rootDir: 'src',
      outDir: 'dist',
    },
    include: ['src'],
  };
  return [
    { path: 'package.json', text: `${JSON.stringify(manifest, null, 2)}\n` },
    { path: 'tsconfig.json', text: `${JSON.stringify(tsconfig, null, 2)}\n` },
  ];
}
