import { labelKeyErrors, labelValueErrors } from './labelValidation.js';
import { SelectorError } from './selectorError.js';

/**
 * Label selectors as Kubernetes parses and applies them (apimachinery `labels.Parse`).
 *
 * Grammar (kube's): requirements joined by `,` (AND), each one of
 * - `key=value`, `key==value`, `key!=value` (the value may be empty: `key=`),
 * - `key in (v1,v2)`, `key notin (v1,v2)` (empty members are allowed: `key in (,a)`, `key in ()`),
 * - `key` (the label exists), `!key` (it does not),
 * - `key>N`, `key<N` with an integer N (kube accepts these in the string form too).
 * Spaces, tabs, CR and LF may stand around every token; `in`/`notin` need no space before `(`.
 * `in` and `notin` are keywords only where an operator is expected, so `in in (in)` is valid.
 *
 * Matching: `=`/`==`/`in` need the label present with one of the values; `!=`/`notin` match when
 * the label is absent or has none of the values; `gt`/`lt` need the label present and an integer.
 * The empty selector matches everything.
 *
 * Errors are {@link SelectorError}s with kube's wording (`unable to parse requirement: ...`,
 * `found 'x', expected: ...`) plus the position of the bad token.
 */

export type LabelOperator = 'in' | 'notin' | '=' | '==' | '!=' | 'exists' | '!' | 'gt' | 'lt';

export interface LabelRequirement {
  readonly key: string;
  readonly operator: LabelOperator;
  /** Sorted and de-duplicated for `in`/`notin` parsed from text; one value for `=`, `==`, `!=`, `gt`, `lt`. */
  readonly values: readonly string[];
}

export class LabelSelector {
  /** The requirements, sorted by key (stable), as kube keeps them. */
  readonly requirements: readonly LabelRequirement[];

  /** @param nothing true for the selector that matches no object (a nil `LabelSelector` in kube). */
  constructor(requirements: readonly LabelRequirement[], private readonly nothing = false) {
    this.requirements = [...requirements].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** True when the selector does not restrict anything (matches every object). */
  get empty(): boolean {
    return !this.nothing && this.requirements.length === 0;
  }

  matches(labels: Readonly<Record<string, string>> | undefined): boolean {
    if (this.nothing) return false;
    return this.requirements.every((r) => requirementMatches(r, labels ?? {}));
  }

  /** Kube's canonical form: requirements by key, `in`/`notin` values sorted, joined by `,`. */
  toString(): string {
    return this.requirements.map(requirementToString).join(',');
  }
}

function requirementMatches(r: LabelRequirement, labels: Readonly<Record<string, string>>): boolean {
  const present = Object.prototype.hasOwnProperty.call(labels, r.key);
  const value = present ? labels[r.key] : undefined;
  switch (r.operator) {
    case 'in':
    case '=':
    case '==':
      return value !== undefined && r.values.includes(value);
    case 'notin':
    case '!=':
      return value === undefined || !r.values.includes(value);
    case 'exists':
      return present;
    case '!':
      return !present;
    case 'gt':
    case 'lt': {
      if (value === undefined || r.values.length !== 1) return false;
      const actual = parseInt64(value);
      const wanted = parseInt64(r.values[0] as string);
      if (actual === undefined || wanted === undefined) return false;
      return r.operator === 'gt' ? actual > wanted : actual < wanted;
    }
  }
}

const int64Pattern = /^[+-]?[0-9]+$/;
const int64Min = -(2n ** 63n);
const int64Max = 2n ** 63n - 1n;

/** Go's `strconv.ParseInt(s, 10, 64)`: optional sign, decimal digits, within int64. */
function parseInt64(s: string): bigint | undefined {
  if (!int64Pattern.test(s)) return undefined;
  const n = BigInt(s);
  return n < int64Min || n > int64Max ? undefined : n;
}

function requirementToString(r: LabelRequirement): string {
  const values = [...r.values].sort();
  switch (r.operator) {
    case 'exists':
      return r.key;
    case '!':
      return `!${r.key}`;
    case 'in':
    case 'notin':
      return `${r.key} ${r.operator} (${values.join(',')})`;
    case 'gt':
      return `${r.key}>${values.join(',')}`;
    case 'lt':
      return `${r.key}<${values.join(',')}`;
    default:
      return `${r.key}${r.operator}${values.join(',')}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Lexer

type TokenKind = 'id' | 'in' | 'notin' | '!' | '=' | '==' | '!=' | '>' | '<' | '(' | ')' | ',' | 'end';

interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  readonly position: number;
}

const symbols = new Set(['=', '!', '(', ')', ',', '>', '<']);
const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';

function lex(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  for (;;) {
    while (i < text.length && isSpace(text[i] as string)) i++;
    if (i >= text.length) {
      tokens.push({ kind: 'end', text: '', position: i });
      return tokens;
    }
    const start = i;
    const c = text[i] as string;
    if (symbols.has(c)) {
      const two = text.slice(i, i + 2);
      const kind = (two === '==' || two === '!=' ? two : c) as TokenKind;
      i += kind.length;
      tokens.push({ kind, text: kind, position: start });
      continue;
    }
    while (i < text.length && !symbols.has(text[i] as string) && !isSpace(text[i] as string)) i++;
    const word = text.slice(start, i);
    tokens.push({ kind: word === 'in' || word === 'notin' ? word : 'id', text: word, position: start });
  }
}

// ---------------------------------------------------------------------------------------------
// Parser: a port of kube's recursive descent, so that exactly the same inputs are accepted.

class Parser {
  private index = 0;

  constructor(
    private readonly text: string,
    private readonly tokens: Token[],
  ) {}

  /** The current token. Where values are expected, `in`/`notin` are plain identifiers. */
  private peek(values = true): Token {
    return asValue(this.tokens[this.index] as Token, values);
  }

  private next(values = true): Token {
    const token = this.peek(values);
    this.index++;
    return token;
  }

  private fail(reason: string, token: Token): never {
    throw new SelectorError(reason, this.text, token.position);
  }

  parse(): LabelRequirement[] {
    const requirements: LabelRequirement[] = [];
    for (;;) {
      const token = this.peek();
      if (token.kind === 'end') return requirements;
      if (token.kind !== 'id' && token.kind !== '!') {
        this.fail(`found '${token.text}', expected: !, identifier, or 'end of string'`, token);
      }
      requirements.push(this.requirement());
      const after = this.next();
      if (after.kind === 'end') return requirements;
      if (after.kind !== ',') this.fail(`found '${after.text}', expected: ',' or 'end of string'`, after);
      const following = this.peek();
      if (following.kind !== 'id' && following.kind !== '!') {
        this.fail(`found '${following.text}', expected: identifier after ','`, following);
      }
    }
  }

  private requirementFail(detail: string, token: Token): never {
    this.fail(`unable to parse requirement: ${detail}`, token);
  }

  private requirement(): LabelRequirement {
    let keyToken = this.next();
    let operator: LabelOperator | undefined;
    if (keyToken.kind === '!') {
      operator = '!';
      keyToken = this.next();
    }
    if (keyToken.kind !== 'id') this.requirementFail(`found '${keyToken.text}', expected: identifier`, keyToken);
    const key = keyToken.text;
    const keyErrors = labelKeyErrors(key);
    if (keyErrors.length > 0) {
      this.requirementFail(`<nil>: Invalid value: ${goQuote(key)}: ${keyErrors.join('; ')}`, keyToken);
    }
    const lookahead = this.peek();
    if (operator === '!') return { key, operator, values: [] };
    if (lookahead.kind === 'end' || lookahead.kind === ',') return { key, operator: 'exists', values: [] };

    const opToken = this.next(false);
    switch (opToken.kind) {
      case 'in':
      case 'notin':
        operator = opToken.kind;
        break;
      case '=':
      case '==':
      case '!=':
        operator = opToken.kind;
        break;
      case '>':
        operator = 'gt';
        break;
      case '<':
        operator = 'lt';
        break;
      default:
        this.requirementFail(`found '${opToken.text}', expected: in, notin, =, ==, !=, gt, lt`, opToken);
    }
    const valuesStart = this.peek();
    const values = operator === 'in' || operator === 'notin' ? this.valueSet() : this.exactValue();
    const sorted = [...new Set(values)].sort();
    this.validateValues(key, operator, sorted, valuesStart);
    return { key, operator, values: sorted };
  }

  /** `( v1, v2, ... )`: empty members count as the empty string, duplicates collapse. */
  private valueSet(): string[] {
    const open = this.next();
    if (open.kind !== '(') this.requirementFail(`found '${open.text}' expected: '('`, open);
    const first = this.peek();
    if (first.kind === ')') {
      this.next();
      return [''];
    }
    if (first.kind !== 'id' && first.kind !== ',') {
      this.requirementFail(`found '${first.text}', expected: ',', ')' or identifier`, first);
    }
    const values: string[] = [];
    for (;;) {
      const token = this.next();
      if (token.kind === 'id') {
        values.push(token.text);
        const after = this.peek();
        if (after.kind === ')') break;
        if (after.kind !== ',') this.requirementFail(`found '${after.text}', expected: ',' or ')'`, after);
      } else if (token.kind === ',') {
        if (values.length === 0) values.push('');
        const after = this.peek();
        if (after.kind === ')') {
          values.push('');
          break;
        }
        if (after.kind === ',') values.push('');
      } else {
        this.requirementFail(`found '${token.text}', expected: ',', or identifier`, token);
      }
    }
    this.next();
    return values;
  }

  private exactValue(): string[] {
    const token = this.peek();
    if (token.kind === 'end' || token.kind === ',') return [''];
    this.next();
    if (token.kind !== 'id') this.requirementFail(`found '${token.text}', expected: identifier`, token);
    return [token.text];
  }

  /** Kube's `NewRequirement` checks, with its field paths (`values[i][key]`). */
  private validateValues(key: string, operator: LabelOperator, values: string[], at: Token): void {
    const errors: string[] = [];
    values.forEach((value, i) => {
      if ((operator === 'gt' || operator === 'lt') && parseInt64(value) === undefined) {
        errors.push(`values[${i}]: Invalid value: ${goQuote(value)}: for 'Gt', 'Lt' operators, the value must be an integer`);
      }
    });
    values.forEach((value, i) => {
      const problems = labelValueErrors(value);
      if (problems.length > 0) errors.push(`values[${i}][${key}]: Invalid value: ${goQuote(value)}: ${problems.join('; ')}`);
    });
    if (errors.length === 1) this.requirementFail(errors[0] as string, at);
    if (errors.length > 1) this.requirementFail(`[${errors.join(', ')}]`, at);
  }
}

function asValue(token: Token, values: boolean): Token {
  return values && (token.kind === 'in' || token.kind === 'notin') ? { ...token, kind: 'id' } : token;
}

/** Go's `%q` for the strings that reach an error message (ASCII escapes are what matter here). */
function goQuote(s: string): string {
  return JSON.stringify(s);
}

/**
 * Parses a label selector in kube's string syntax (see the module comment). The empty string,
 * or one of only whitespace, selects everything. Throws {@link SelectorError} on bad input.
 */
export function parseLabelSelector(text: string): LabelSelector {
  return new LabelSelector(new Parser(text, lex(text)).parse());
}

export type LabelSelectorOperatorName = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelectorObject {
  matchLabels?: Readonly<Record<string, string>> | null;
  matchExpressions?: ReadonlyArray<{ key: string; operator: LabelSelectorOperatorName | string; values?: readonly string[] | null }> | null;
}

const objectOperators: Record<LabelSelectorOperatorName, LabelOperator> = {
  In: 'in',
  NotIn: 'notin',
  Exists: 'exists',
  DoesNotExist: '!',
};

/**
 * The selector of a `metav1.LabelSelector` (Deployment `spec.selector`, ...), as kube's
 * `LabelSelectorAsSelector`: `null`/`undefined` matches nothing; no labels and no expressions
 * match everything; `matchLabels` and `matchExpressions` are ANDed. `In`/`NotIn` need values,
 * `Exists`/`DoesNotExist` must have none; keys and values are validated like the string form.
 */
export function labelSelectorFromObject(sel: LabelSelectorObject | null | undefined): LabelSelector {
  if (sel === null || sel === undefined) return new LabelSelector([], true);
  const requirements: LabelRequirement[] = [];
  const text = JSON.stringify(sel) ?? String(sel);
  checkSelectorShape(sel, text);
  const check = (key: string, operator: LabelOperator, values: readonly string[]): void => {
    const errors: string[] = [];
    const keyErrors = labelKeyErrors(key);
    if (keyErrors.length > 0) errors.push(`key: Invalid value: ${goQuote(key)}: ${keyErrors.join('; ')}`);
    if ((operator === 'in' || operator === 'notin') && values.length === 0) {
      errors.push(`values: Invalid value: []string{}: for 'in', 'notin' operators, values set can't be empty`);
    }
    if ((operator === 'exists' || operator === '!') && values.length !== 0) {
      errors.push(`values: Invalid value: ${goStringSlice(values)}: values set must be empty for exists and does not exist`);
    }
    values.forEach((value, i) => {
      const problems = labelValueErrors(value);
      if (problems.length > 0) errors.push(`values[${i}][${key}]: Invalid value: ${goQuote(value)}: ${problems.join('; ')}`);
    });
    if (errors.length === 1) throw new SelectorError(errors[0] as string, text);
    if (errors.length > 1) throw new SelectorError(`[${errors.join(', ')}]`, text);
  };
  for (const [key, value] of Object.entries(sel.matchLabels ?? {})) {
    check(key, '=', [value]);
    requirements.push({ key, operator: '=', values: [value] });
  }
  for (const expression of sel.matchExpressions ?? []) {
    const known = typeof expression.operator === 'string' && Object.prototype.hasOwnProperty.call(objectOperators, expression.operator);
    if (!known) {
      const operator: unknown = expression.operator;
      // JSON.stringify, not String: an object without a prototype has no string form.
      const shown = typeof operator === 'string' ? goQuote(operator) : (JSON.stringify(operator) ?? typeof operator);
      throw new SelectorError(`${shown} is not a valid label selector operator`, text);
    }
    const operator = objectOperators[expression.operator as LabelSelectorOperatorName];
    const values = [...(expression.values ?? [])];
    check(expression.key, operator, values);
    requirements.push({ key: expression.key, operator, values });
  }
  return new LabelSelector(requirements);
}

/**
 * What kube's decoder would refuse before any selector rule applies: a selector that is not an
 * object, labels or values that are not strings, expressions that are not objects. Checked here
 * because the object comes from stored JSON, whatever its declared type.
 */
function checkSelectorShape(sel: unknown, text: string): void {
  const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
  const fail = (what: string): never => {
    throw new SelectorError(`${what} (got ${text})`, text);
  };
  if (!isObject(sel)) fail('a label selector must be an object');
  const { matchLabels, matchExpressions } = sel as Record<string, unknown>;
  if (matchLabels !== undefined && matchLabels !== null) {
    if (!isObject(matchLabels)) fail('matchLabels must be a map of strings');
    for (const [key, value] of Object.entries(matchLabels as Record<string, unknown>)) {
      if (typeof value !== 'string') fail(`matchLabels[${goQuote(key)}] must be a string`);
    }
  }
  if (matchExpressions === undefined || matchExpressions === null) return;
  if (!Array.isArray(matchExpressions)) fail('matchExpressions must be a list');
  (matchExpressions as unknown[]).forEach((expression, i) => {
    if (!isObject(expression)) return fail(`matchExpressions[${i}] must be an object`);
    if (typeof expression.key !== 'string') fail(`matchExpressions[${i}].key must be a string`);
    const values = expression.values;
    if (values !== undefined && values !== null && (!Array.isArray(values) || values.some((v) => typeof v !== 'string'))) {
      fail(`matchExpressions[${i}].values must be a list of strings`);
    }
  });
}

function goStringSlice(values: readonly string[]): string {
  return `[]string{${values.map(goQuote).join(', ')}}`;
}
