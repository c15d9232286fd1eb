#!/usr/bin/env node
// Launcher for the `rxkube` command. A built package runs dist/cli.js; a
// clean clone (no build yet) runs src/cli.ts through tsx, so
// `npx rxkube apiserver` works right after `npm install`.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const built = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
let cli;
if (existsSync(built)) {
  cli = await import(pathToFileURL(built).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  cli = await import(new URL('../src/cli.ts', import.meta.url).href);
}
process.exitCode = await cli.runCli(process.argv.slice(2));
