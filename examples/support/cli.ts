import { parseArgs } from 'node:util';

/**
 * The command lines of the example programs: node's own `parseArgs` in
 * strict mode, so that a misspelt option or a bad value stops the program
 * with a message naming it (exit code 2) instead of being ignored.
 */

/** An option a program takes: a value of one of these forms, or a switch. */
export type OptionSpec =
  | { kind: 'integer'; value: string; help: string; min?: number }
  | { kind: 'string'; value: string; help: string }
  | { kind: 'choice'; value: string; help: string; choices: readonly string[] }
  | { kind: 'switch'; help: string };

/** What a command line said: values by option name (integers as numbers), absent when not given. */
export type ParsedOptions = Record<string, string | number | boolean | undefined>;

/** A command line that cannot be run: the message names the option and what was wrong with it. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** The result of parsing: the options, or a request for the usage text. */
export type CommandLine = { help: true } | { help: false; options: ParsedOptions };

/** The usage text of a program: its synopsis, what it does, and one line per option. */
export function usageText(synopsis: string, about: string, specs: Readonly<Record<string, OptionSpec>>): string {
  const rows: [string, string][] = Object.entries(specs).map(([name, spec]) => [`--${name}${spec.kind === 'switch' ? '' : ` <${spec.value}>`}`, spec.help]);
  rows.push(['-h, --help', 'show this help and exit']);
  const width = Math.max(...rows.map(([left]) => left.length)) + 2;
  return [`usage: ${synopsis}`, '', about, '', 'options:', ...rows.map(([left, help]) => `  ${left.padEnd(width)}${help}`), ''].join('\n');
}

function checked(name: string, spec: OptionSpec, text: string): string | number {
  if (spec.kind === 'integer') {
    const min = spec.min ?? 0;
    if (!/^-?\d+$/.test(text) || Number(text) < min || !Number.isSafeInteger(Number(text))) {
      throw new UsageError(`--${name} must be an integer >= ${min}, got ${JSON.stringify(text)}`);
    }
    return Number(text);
  }
  if (spec.kind === 'choice' && !spec.choices.includes(text)) {
    throw new UsageError(`--${name} must be one of ${spec.choices.join(', ')}, got ${JSON.stringify(text)}`);
  }
  if (text === '') throw new UsageError(`--${name} needs a value`);
  return text;
}

/** Parses `argv` (without node and the script) against `specs`; throws a `UsageError` naming what is wrong. */
export function parseCommandLine(argv: readonly string[], specs: Readonly<Record<string, OptionSpec>>): CommandLine {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = { help: { type: 'boolean', short: 'h' } };
  for (const [name, spec] of Object.entries(specs)) options[name] = { type: spec.kind === 'switch' ? 'boolean' : 'string' };
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: [...argv], options, strict: true, allowPositionals: false }) as { values: Record<string, string | boolean | undefined> });
  } catch (err) {
    // parseArgs' own words name the option ("Unknown option '--bogus'", "Option '--pace <value>' argument missing").
    if ((err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) throw new UsageError((err as Error).message);
    throw err;
  }
  if (values.help === true) return { help: true };
  const parsed: ParsedOptions = {};
  for (const [name, spec] of Object.entries(specs)) {
    const value = values[name];
    parsed[name] = typeof value === 'string' ? checked(name, spec, value) : value;
  }
  return { help: false, options: parsed };
}
