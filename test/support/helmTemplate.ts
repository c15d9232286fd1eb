import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';

/**
 * `helm template --include-crds` for the part of Helm's template language
 * that `rxkube manifests --helm` writes, and nothing more: an action it
 * does not know fails the render, so a template that strays outside that
 * part fails its test instead of rendering wrongly.
 *
 * Helm's rules kept here (text/template and sprig): `{{-` trims every
 * whitespace character before the action, `-}}` every one after it; a
 * missing value is nil; `if` is false for false, 0, nil, "" and empty
 * lists and maps; `toJson` is JSON (Go's encoder escapes <, > and & as
 * \u003c…, which YAML reads as the same characters); files in `crds/` are
 * never templated and come first; templates render in file name order
 * (Helm sorts its output by kind, so the tests compare sets of objects).
 */

type Values = Record<string, unknown>;

/** A value below `.Values` by its dotted path; nil (undefined) where a step is missing, as Helm's. */
function lookup(values: Values, path: string): unknown {
  let at: unknown = values;
  for (const step of path.split('.')) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Values)[step];
  }
  return at;
}

function truthy(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (typeof value === 'object') return Object.keys(value).length > 0;
  return true;
}

/** Renders one template with `.Values` and `.Release.Namespace`. */
export function renderTemplate(text: string, values: Values, namespace: string): string {
  const parts = text.split(/(\{\{-?\s*[\s\S]*?\s*-?\}\})/);
  let out = '';
  // One entry per open `if`: whether its branch is being written, and whether the `if` was true.
  const stack: { writing: boolean; taken: boolean }[] = [];
  const writing = () => stack.every((s) => s.writing);
  for (let i = 0; i < parts.length; i++) {
    let part = parts[i] as string;
    if (i % 2 === 0) {
      // A `-}}` before this text trims its start.
      if (i > 0 && (parts[i - 1] as string).endsWith('-}}')) part = part.replace(/^\s+/, '');
      if (i + 1 < parts.length && (parts[i + 1] as string).startsWith('{{-')) part = part.replace(/\s+$/, '');
      if (writing()) out += part;
      continue;
    }
    const action = part.replace(/^\{\{-?\s*/, '').replace(/\s*-?\}\}$/, '');
    let m: RegExpExecArray | null;
    if ((m = /^if (not )?\.Values\.([\w.]+)$/.exec(action))) {
      const value = truthy(lookup(values, m[2] as string));
      const taken = m[1] === undefined ? value : !value;
      stack.push({ writing: taken, taken });
    } else if (action === 'else') {
      const top = stack.at(-1);
      if (top === undefined) throw new Error('else without if');
      top.writing = !top.taken;
    } else if (action === 'end') {
      if (stack.pop() === undefined) throw new Error('end without if');
    } else if ((m = /^\.Values\.([\w.]+) \| toJson$/.exec(action))) {
      // Go's json of nil is null.
      if (writing()) out += JSON.stringify(lookup(values, m[1] as string) ?? null);
    } else if (action === '.Release.Namespace') {
      if (writing()) out += namespace;
    } else {
      throw new Error(`an action this renderer does not know, so the chart strays from the subset it keeps to: {{ ${action} }}`);
    }
  }
  if (stack.length > 0) throw new Error('an if without its end');
  return out;
}

/** Deep merge of overrides into values, as `helm template --set`/`-f` do for maps. */
export function mergeValues(base: Values, overrides: Values): Values {
  const out: Values = { ...base };
  for (const [key, value] of Object.entries(overrides)) {
    const old = out[key];
    out[key] =
      value !== null && typeof value === 'object' && !Array.isArray(value) && old !== null && typeof old === 'object' && !Array.isArray(old)
        ? mergeValues(old as Values, value as Values)
        : value;
  }
  return out;
}

/** The objects a chart folder renders to: its crds/ as they are, then its templates/, with values.yaml under `overrides`. */
export async function helmTemplate(chart: string, namespace: string, overrides: Values = {}): Promise<Record<string, unknown>[]> {
  const defaults = (parseAllDocuments(await readFile(join(chart, 'values.yaml'), 'utf8'))[0]?.toJS() ?? {}) as Values;
  const values = mergeValues(defaults, overrides);
  const read = async (dir: string) => {
    const names = (await readdir(join(chart, dir)).catch(() => [] as string[])).filter((n) => n.endsWith('.yaml')).sort();
    return Promise.all(names.map((n) => readFile(join(chart, dir, n), 'utf8')));
  };
  const texts = [...(await read('crds')), ...(await read('templates')).map((t) => renderTemplate(t, values, namespace))];
  return texts.flatMap((t) =>
    parseAllDocuments(t).flatMap((d) => {
      if (d.errors.length > 0) throw new Error(`a rendered template is no YAML: ${d.errors[0]?.message}\n${t}`);
      const object = d.toJS() as Record<string, unknown> | null;
      return object === null ? [] : [object];
    }),
  );
}
