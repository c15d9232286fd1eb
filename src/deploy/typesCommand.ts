import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { UsageError, type CliIo } from '../util/cli.js';
import { crdTypes, CrdTypesError, isCrd, type GeneratedFile } from './crdTypes.js';

/**
 * `rxkube types <file|->`: TypeScript types for every CustomResourceDefinition
 * of a YAML (or JSON) file, or of standard input for `-`. Exit codes: 0
 * written, 2 a bad command line, a file that cannot be read or parsed, holds
 * no CRD, or holds a CRD of the wrong shape (named), 1 a write that failed.
 */

export const typesUsage = `usage: rxkube types <file|-> [options]

Writes TypeScript types for every CustomResourceDefinition in <file> (YAML or JSON, several documents
or a List; - reads standard input): for each served version, <group>/<version>/<Kind>.ts with an
interface for the objects (the schema's descriptions as doc comments) and a WatchedResource constant,
<Kind>Resource, for controller({ for }). The files import ObjectMeta and WatchedResource from rxkube.

options:
  --out <dir>   write the files below <dir> (made if missing) and list them; without it, print them
  -h, --help    show this help
`;

function parse(args: string[]) {
  try {
    return parseArgs({ args, options: { out: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, strict: true, allowPositionals: true });
  } catch (err) {
    if ((err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) throw new UsageError((err as Error).message);
    throw err;
  }
}

async function readInput(file: string): Promise<string> {
  if (file === '-') {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
  return readFile(file, 'utf8').catch((err: unknown) => {
    throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
  });
}

/** Every CRD of a YAML stream, the items of a `List` among them; a parse error names the file and line. */
export function crdsOf(text: string, file: string): unknown[] {
  const out: unknown[] = [];
  for (const doc of parseAllDocuments(text)) {
    const [error] = doc.errors;
    if (error !== undefined) throw new UsageError(`${file} is not YAML: ${error.message.split('\n')[0]}`);
    const value: unknown = doc.toJS();
    const items = typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'List' ? (value as { items?: unknown }).items : [value];
    for (const item of Array.isArray(items) ? items : []) if (isCrd(item)) out.push(item);
  }
  return out;
}

/** Runs `rxkube types` with its arguments; returns the exit code. */
export async function typesCommand(args: string[], io: CliIo): Promise<number> {
  try {
    const { values, positionals } = parse(args);
    if (values.help) {
      io.out(typesUsage);
      return 0;
    }
    if (positionals.length !== 1) throw new UsageError(`needs exactly one file (or - for standard input), got ${positionals.length === 0 ? 'none' : positionals.map((p) => JSON.stringify(p)).join(' ')}`);
    const file = positionals[0] as string;
    const name = file === '-' ? 'standard input' : file;
    const crds = crdsOf(await readInput(file), name);
    if (crds.length === 0) throw new UsageError(`${name} holds no CustomResourceDefinition`);
    const files: GeneratedFile[] = [];
    for (const crd of crds) {
      try {
        files.push(...crdTypes(crd));
      } catch (err) {
        if (err instanceof CrdTypesError) throw new UsageError(`${name}: ${err.message}`);
        throw err;
      }
    }
    if (values.out === undefined) {
      io.out(files.map((f) => `// ${f.path}\n${f.text}`).join('\n'));
      return 0;
    }
    for (const f of files) {
      const path = join(values.out, f.path);
      await mkdir(dirname(path), { recursive: true });
      // Types hold no secrets: readable like any source file.
      await writeFile(path, f.text, { mode: 0o644 });
      io.out(path);
    }
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`rxkube types: ${error.message}\n(rxkube types --help lists the options)`);
      return 2;
    }
    io.err(`rxkube types: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
