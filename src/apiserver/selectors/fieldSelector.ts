import type { GroupKind } from '../api/groupKind.js';
import { SelectorError } from './selectorError.js';

/**
 * Field selectors as Kubernetes parses and applies them (apimachinery `fields.ParseSelector`
 * followed by the kind's field-label conversion).
 *
 * Syntax: terms joined by `,` (AND), each `field=value`, `field==value` or `field!=value`. The
 * operator is the first `!=`, `==` or `=` in the term; nothing is trimmed, so `a = b` names the
 * field `a ` (with a space), as in kube. In values, `\,`, `\=` and `\\` stand for `,`, `=` and
 * `\`; any other backslash sequence, a trailing `\`, or a bare `=` or `,` in a value is an error.
 * Empty terms (`a=b,,c=d`, or the empty string) are ignored; the empty selector matches all.
 *
 * A field not offered by the kind is an error: `field label not supported: <field>` for kinds that
 * register their own field list in kube (Pod, Event, Secret, Namespace, Service, ...), and
 * `"<field>" is not a known field selector: only "metadata.name", "metadata.namespace"` for the
 * others (ConfigMap, Deployment, Lease, custom resources), see {@link usesDefaultFieldConversion}.
 *
 * Matching compares the object's field, as a string, with the value; a missing field is "".
 */

export interface FieldRequirement {
  readonly field: string;
  readonly operator: '=' | '!=';
  readonly value: string;
}

export class FieldSelector {
  constructor(
    /** In kube's order: sorted by the terms' text. */
    readonly requirements: readonly FieldRequirement[],
  ) {}

  get empty(): boolean {
    return this.requirements.length === 0;
  }

  matches(obj: object): boolean {
    return this.requirements.every((r) => (fieldValue(obj, r.field) === r.value) === (r.operator === '='));
  }

  /** The value a `field=value` (or `==`) term requires, if any: lets a server serve `metadata.name=x` by key. */
  requiresExactMatch(field: string): string | undefined {
    return this.requirements.find((r) => r.field === field && r.operator === '=')?.value;
  }

  /** Kube's canonical form: `field=value` / `field!=value` with `\`, `,` and `=` escaped. */
  toString(): string {
    return this.requirements.map((r) => `${r.field}${r.operator}${escapeFieldValue(r.value)}`).join(',');
  }
}

export function escapeFieldValue(value: string): string {
  return value.replace(/[\\,=]/g, (c) => `\\${c}`);
}

export interface ParseFieldSelectorOptions {
  /**
   * True for kinds without a field-label conversion of their own in kube (then the error for an
   * unknown field is kube's default one); see {@link usesDefaultFieldConversion}. Default false.
   */
  readonly defaultConversion?: boolean;
}

/**
 * Parses `text` and checks every field against `allowedFields` (see the module comment).
 * Throws {@link SelectorError}.
 */
export function parseFieldSelector(
  text: string,
  allowedFields: readonly string[],
  options: ParseFieldSelectorOptions = {},
): FieldSelector {
  const terms = splitTerms(text).sort((a, b) => (a.text < b.text ? -1 : a.text > b.text ? 1 : 0));
  const requirements: FieldRequirement[] = [];
  const positions: number[] = [];
  for (const term of terms) {
    if (term.text === '') continue;
    const split = splitTerm(term.text);
    if (split === undefined) {
      throw new SelectorError(`invalid selector: '${text}'; can't understand '${term.text}'`, text, term.position);
    }
    const value = unescapeValue(split.rhs, text, term.position + split.rhsOffset);
    requirements.push({ field: split.lhs, operator: split.operator === '!=' ? '!=' : '=', value });
    positions.push(term.position);
  }
  for (const [i, r] of requirements.entries()) {
    if (!allowedFields.includes(r.field)) {
      const reason = options.defaultConversion
        ? `"${r.field}" is not a known field selector: only "metadata.name", "metadata.namespace"`
        : `field label not supported: ${r.field}`;
      throw new SelectorError(reason, text, positions[i]);
    }
  }
  return new FieldSelector(requirements);
}

interface Term {
  readonly text: string;
  readonly position: number;
}

/** Splits on `,` not preceded by a backslash escape. */
function splitTerms(text: string): Term[] {
  if (text === '') return [];
  const terms: Term[] = [];
  let start = 0;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (escaped) escaped = false;
    else if (c === '\\') escaped = true;
    else if (c === ',') {
      terms.push({ text: text.slice(start, i), position: start });
      start = i + 1;
    }
  }
  terms.push({ text: text.slice(start), position: start });
  return terms;
}

function splitTerm(term: string): { lhs: string; operator: string; rhs: string; rhsOffset: number } | undefined {
  for (let i = 0; i < term.length; i++) {
    for (const operator of ['!=', '==', '=']) {
      if (term.startsWith(operator, i)) {
        const rhsOffset = i + operator.length;
        return { lhs: term.slice(0, i), operator, rhs: term.slice(rhsOffset), rhsOffset };
      }
    }
  }
  return undefined;
}

function unescapeValue(value: string, selector: string, offset: number): string {
  let out = '';
  let escaped = false;
  for (let i = 0; i < value.length; i++) {
    const c = value[i] as string;
    if (escaped) {
      if (c !== '\\' && c !== ',' && c !== '=') {
        throw new SelectorError(`invalid field selector: invalid escape sequence: \\${c}`, selector, offset + i - 1);
      }
      out += c;
      escaped = false;
    } else if (c === '\\') {
      escaped = true;
    } else if (c === ',' || c === '=') {
      // Kube prints the rune as a number (Go's %v of a rune).
      throw new SelectorError(`invalid field selector: unescaped character in value: ${c.charCodeAt(0)}`, selector, offset + i);
    } else {
      out += c;
    }
  }
  if (escaped) throw new SelectorError('invalid field selector: invalid escape sequence: \\', selector, offset + value.length - 1);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Which fields a kind offers, and how their values are read.

const meta = ['metadata.name', 'metadata.namespace'] as const;

/** Kube's field-label conversions (the `conversion.go` files of pkg/apis), by `group/Kind`. */
const registered: Readonly<Record<string, readonly string[]>> = {
  '/Pod': [
    ...meta,
    'spec.nodeName',
    'spec.restartPolicy',
    'spec.schedulerName',
    'spec.serviceAccountName',
    'spec.hostNetwork',
    'status.phase',
    'status.podIP',
    'status.podIPs',
    'status.nominatedNodeName',
  ],
  '/Event': [
    ...meta,
    'involvedObject.kind',
    'involvedObject.namespace',
    'involvedObject.name',
    'involvedObject.uid',
    'involvedObject.apiVersion',
    'involvedObject.resourceVersion',
    'involvedObject.fieldPath',
    'reason',
    'reportingComponent',
    'source',
    'type',
  ],
  '/Namespace': ['metadata.name', 'status.phase'],
  '/Secret': [...meta, 'type'],
  '/Service': [...meta, 'spec.clusterIP', 'spec.type'],
  '/Node': ['metadata.name', 'spec.unschedulable'],
  '/ReplicationController': [...meta, 'status.replicas'],
  'apps/ReplicaSet': [...meta, 'status.replicas'],
  'batch/Job': [...meta, 'status.successful'],
  'certificates.k8s.io/CertificateSigningRequest': ['metadata.name', 'spec.signerName'],
};

function keyOf(kind: string | GroupKind): string {
  return typeof kind === 'string' ? `/${kind}` : `${kind.group}/${kind.kind}`;
}

/**
 * The fields kube lets a field selector use for a built-in kind. A string names a kind of the
 * core group (`'Pod'`); pass a {@link GroupKind} for other groups. Kinds without their own list
 * (ConfigMap, Deployment, Lease, events.k8s.io Event, custom resources, ...) offer
 * `metadata.name` and `metadata.namespace`. Note that kube offers Namespaces (and Nodes) no
 * `metadata.namespace`.
 */
export function defaultFieldsFor(kind: string | GroupKind): readonly string[] {
  return registered[keyOf(kind)] ?? meta;
}

/** True when kube has no field-label conversion of its own for the kind (see {@link ParseFieldSelectorOptions}). */
export function usesDefaultFieldConversion(kind: string | GroupKind): boolean {
  return registered[keyOf(kind)] === undefined;
}

/**
 * The value kube compares for `field` in `obj`: a dotted path, except for the fields kube
 * computes (a Pod's `status.podIP` is its first `status.podIPs[].ip`, `spec.hostNetwork` is
 * `"false"` when unset, `status.podIPs` is always empty; an Event's `source` is
 * `source.component`, or `reportingComponent` when that is empty). Strings are taken as they
 * are, booleans and numbers as their text, anything else (missing, null, objects) as "".
 */
export function fieldValue(obj: object, field: string): string {
  const kind = (obj as { kind?: unknown }).kind;
  if (kind === 'Pod') {
    if (field === 'status.podIP') {
      const first = readPath(obj, 'status.podIPs.0.ip');
      return first === '' ? readPath(obj, 'status.podIP') : first;
    }
    if (field === 'spec.hostNetwork') return readPath(obj, field) === 'true' ? 'true' : 'false';
    if (field === 'status.podIPs') return '';
  }
  if (kind === 'Event' && field === 'source' && !String((obj as { apiVersion?: unknown }).apiVersion).includes('/')) {
    const component = readPath(obj, 'source.component');
    return component === '' ? readPath(obj, 'reportingComponent') : component;
  }
  return readPath(obj, field);
}

function readPath(obj: object, path: string): string {
  let current: unknown = obj;
  for (const part of path.split('.')) {
    if (current === null || typeof current !== 'object' || !Object.prototype.hasOwnProperty.call(current, part)) return '';
    current = (current as Record<string, unknown>)[part];
  }
  if (typeof current === 'string') return current;
  if (typeof current === 'number' || typeof current === 'boolean') return String(current);
  return '';
}
