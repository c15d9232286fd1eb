import { parse } from '@bufbuild/cel';
import type { Expr } from './staticCheck.js';

/**
 * CEL's optional syntax as kube-apiserver 1.32 compiles it (cel-go's
 * optional types): `a.?b` and `a[?k]` give an optional that has a value when
 * the field, key or index exists; a selection or index on an optional gives
 * an optional again (none stays none). The evaluator's parser knows none of
 * this, so the rule is parsed with each `.?` and `[?` replaced by the same
 * characters without the `?` (`. `, `[ `), which keeps every offset, and the
 * selections and indexes found at those offsets are then turned into calls
 * of the functions below (library.ts implements them).
 */

export const optionalSelect = 'kube.optionalSelect';
export const optionalIndex = 'kube.optionalIndex';
/** A plain selection or index on an optional (`a.?b.c`, `a.?b[0]`). */
export const optionalChain = 'kube.optionalChain';

export type Parsed = ReturnType<typeof parse>;

/** The offsets of `.?` and `[?` outside strings and comments, and the source with their `?` blanked. */
function blankOptionalMarks(source: string): { text: string; dots: Set<number>; brackets: Set<number> } {
  const dots = new Set<number>();
  const brackets = new Set<number>();
  const out = source.split('');
  let i = 0;
  while (i < source.length) {
    const c = source[i] as string;
    if (c === '/' && source[i + 1] === '/') {
      while (i < source.length && source[i] !== '\n') i += 1;
      continue;
    }
    if (c === '"' || c === "'") {
      const raw = i > 0 && /[rR]/.test(source[i - 1] as string) && (i < 2 || !/[A-Za-z0-9_]/.test(source[i - 2] as string));
      const quote = source.startsWith(c.repeat(3), i) ? c.repeat(3) : c;
      i += quote.length;
      while (i < source.length && !source.startsWith(quote, i)) i += !raw && source[i] === '\\' ? 2 : 1;
      i += quote.length;
      continue;
    }
    if ((c === '.' || c === '[') && source[i + 1] === '?') {
      (c === '.' ? dots : brackets).add(i);
      out[i + 1] = ' ';
      i += 2;
      continue;
    }
    i += 1;
  }
  return { text: out.join(''), dots, brackets };
}

function stringConst(id: bigint, value: string): Expr {
  return { id, exprKind: { case: 'constExpr', value: { constantKind: { case: 'stringValue', value } } } } as unknown as Expr;
}

function call(e: Expr, fn: string, args: Expr[]): void {
  (e as { exprKind: unknown }).exprKind = { case: 'callExpr', value: { function: fn, args } };
}

function producesOptional(e: Expr | undefined): boolean {
  return e?.exprKind.case === 'callExpr' && [optionalSelect, optionalIndex, optionalChain].includes(e.exprKind.value.function);
}

/** Parses a rule that may use `.?` and `[?`; throws the parser's error, or one for optional list and map entries, which are not supported. */
export function parseWithOptionals(source: string): Parsed {
  if (!source.includes('?')) return parse(source);
  const { text, dots, brackets } = blankOptionalMarks(source);
  const parsed = parse(text);
  if (dots.size === 0 && brackets.size === 0) return parsed;
  const positions = parsed.sourceInfo?.positions ?? {};
  let nextId = 0n;
  for (const id of Object.keys(positions)) if (BigInt(id) >= nextId) nextId = BigInt(id) + 1n;
  const at = (e: Expr): number => positions[String(e.id)] ?? -1;
  const used = new Set<number>();
  const visit = (e: Expr | undefined): void => {
    if (e === undefined) return;
    const kind = e.exprKind;
    switch (kind.case) {
      case 'selectExpr': {
        const { operand, field, testOnly } = kind.value;
        visit(operand);
        if (operand === undefined || testOnly) return;
        const optional = dots.has(at(e));
        if (optional) used.add(at(e));
        if (optional || producesOptional(operand)) {
          const key = stringConst(nextId, field);
          nextId += 1n;
          call(e, optional ? optionalSelect : optionalChain, [operand, key]);
        }
        return;
      }
      case 'callExpr': {
        const c = kind.value;
        visit(c.target);
        c.args.forEach(visit);
        if (c.function !== '_[_]' || c.target !== undefined || c.args.length !== 2) return;
        const optional = brackets.has(at(e));
        if (optional) used.add(at(e));
        if (optional || producesOptional(c.args[0])) call(e, optional ? optionalIndex : optionalChain, [...c.args]);
        return;
      }
      case 'listExpr':
        kind.value.elements.forEach(visit);
        return;
      case 'structExpr':
        for (const entry of kind.value.entries) {
          if (entry.keyKind.case === 'mapKey') visit(entry.keyKind.value);
          visit(entry.value);
        }
        return;
      case 'comprehensionExpr':
        for (const part of [kind.value.iterRange, kind.value.accuInit, kind.value.loopCondition, kind.value.loopStep, kind.value.result]) visit(part);
        return;
      default:
        return;
    }
  };
  visit(parsed.expr);
  const unused = [...dots, ...brackets].filter((offset) => !used.has(offset)).sort((a, b) => a - b)[0];
  if (unused !== undefined) throw new Error(`<input>:${lineColumn(source, unused)}: optional list elements and map entries ([?x], {?k: v}) are not supported by this server`);
  return parsed;
}

function lineColumn(source: string, offset: number): string {
  const before = source.slice(0, offset);
  const line = before.split('\n').length;
  return `${line}:${offset - before.lastIndexOf('\n')}`;
}
