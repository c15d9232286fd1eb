/**
 * Property names as CEL rules see them, by kube's escaping rules: a name
 * that is a CEL reserved word becomes `__{word}__` (`namespace` is read as
 * `self.__namespace__`), and in other names `__` becomes
 * `__underscores__`, `.` `__dot__`, `-` `__dash__` and `/` `__slash__`. A
 * name that starts with a digit or holds any other character has no CEL
 * name: rules cannot read it as a field. Error paths keep the real names;
 * only what a rule reads is escaped.
 */

const reserved = new Set([
  'true', 'false', 'null', 'in', 'as', 'break', 'const', 'continue', 'else', 'for', 'function',
  'if', 'import', 'let', 'loop', 'package', 'namespace', 'return', 'var', 'void', 'while',
]);

const plain = /^[A-Za-z_][A-Za-z0-9_]*$/;
const escapable = /^[A-Za-z_./-][A-Za-z0-9_./-]*$/;
const sequences: Readonly<Record<string, string>> = { __: '__underscores__', '.': '__dot__', '-': '__dash__', '/': '__slash__' };

/** The CEL name of a property, or undefined when it has none. */
export function escapePropertyName(name: string): string | undefined {
  if (reserved.has(name)) return `__${name}__`;
  if (plain.test(name) && !name.includes('__')) return name;
  if (!escapable.test(name)) return undefined;
  return name.replace(/__|[./-]/g, (s) => sequences[s] as string);
}
