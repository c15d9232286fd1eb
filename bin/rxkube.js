#!/usr/bin/env node
// Launcher for the `rxkube` command. An installed package runs dist/cli.js.
// A checkout (tsconfig.json beside package.json; a package ships none) runs
// dist/cli.js only while that build is at least as new as every file under
// src/, and src/cli.ts through tsx otherwise: a clean clone (no build yet),
// or sources edited since the last build, which would otherwise run stale
// code without a word. (An installed package's file times say nothing: npm
// writes each file when it unpacks it, dist/ before src/.)
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const built = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const sources = fileURLToPath(new URL('../src', import.meta.url));
const checkout = existsSync(fileURLToPath(new URL('../tsconfig.json', import.meta.url)));

/** The newest modification time of a file under `dir` (0 when there is none). */
function newestUnder(dir) {
  if (!existsSync(dir)) return 0;
  let newest = 0;
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs);
  }
  return newest;
}

async function loadTsx() {
  try {
    return await import('tsx/esm/api');
  } catch {
    return undefined;
  }
}

let cli;
const hasBuild = existsSync(built);
const stale = hasBuild && checkout && newestUnder(sources) > statSync(built).mtimeMs;
if (hasBuild && !stale) {
  cli = await import(pathToFileURL(built).href);
} else {
  const tsx = await loadTsx();
  if (tsx !== undefined) {
    tsx.register();
    cli = await import(pathToFileURL(join(sources, 'cli.ts')).href);
  } else if (hasBuild) {
    process.stderr.write(`rxkube: ${built} is older than ${sources} and tsx is not installed to run the sources: running the build (npm run build brings it up to date)\n`);
    cli = await import(pathToFileURL(built).href);
  } else {
    throw new Error(`rxkube: no build at ${built}, and tsx is not installed to run ${sources}: run npm run build, or npm install`);
  }
}
process.exitCode = await cli.runCli(process.argv.slice(2));
