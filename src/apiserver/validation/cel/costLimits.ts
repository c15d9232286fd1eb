import type { FieldError } from '../../api/statusError.js';
import { saturatingAdd, staticEstimatedCostLimit, staticEstimatedCrdCostLimit } from './costModel.js';

/**
 * The limits kube-apiserver 1.32 puts on the estimated cost of a CRD's
 * rules when the CRD is written (apiextensions' validation.go): a rule or
 * messageExpression may cost at most 10,000,000 (its own estimate times how
 * many times it may run), and all of a schema's together at most
 * 100,000,000, in which case the most expensive (up to four, each at least
 * 1% of that limit) are named too. The messages are kube's.
 */

/** Go's `%.Nf`: the exact value rounded to N decimals, ties to even (JavaScript's toFixed rounds ties up). */
function goFixed(value: number, digits: number): string {
  const scaled = value * 10 ** digits;
  const floor = Math.floor(scaled);
  if (scaled - floor === 0.5 && scaled / 10 ** digits === value) return ((floor % 2 === 0 ? floor : floor + 1) / 10 ** digits).toFixed(digits);
  return value.toFixed(digits);
}

/** kube's `getCostErrorMessage`. */
export function costErrorMessage(costName: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const shown = factor > 100 ? 'more than 100x' : factor < 1.5 ? `${goFixed(factor, 6)}x` : `${goFixed(factor, 1)}x`;
  return `${costName} exceeds budget by factor of ${shown} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

/** The per-expression check: the error to report at `field`, if the cost is over the limit. */
export function expressionCostError(field: string, costName: string, cost: number): FieldError | undefined {
  return cost > staticEstimatedCostLimit ? { field, type: 'Forbidden', detail: costErrorMessage(costName, cost, staticEstimatedCostLimit) } : undefined;
}

/** The running total of a schema's rules (kube's `TotalCost`). */
export class CostTotal {
  private total = 0;
  private readonly expensive: { field: string; cost: number }[] = [];

  observe(field: string, cost: number): void {
    this.total = saturatingAdd(this.total, cost);
    if (cost < staticEstimatedCrdCostLimit / 100) return;
    this.expensive.push({ field, cost });
    this.expensive.sort((a, b) => b.cost - a.cost);
    this.expensive.length = Math.min(this.expensive.length, 4);
  }

  /** The errors when the total is over the limit; `schemaPath` is the schema's own path (`spec.validation.openAPIV3Schema`). */
  errors(schemaPath: string): FieldError[] {
    if (this.total <= staticEstimatedCrdCostLimit) return [];
    return [
      ...this.expensive.map((e): FieldError => ({ field: e.field, type: 'Forbidden', detail: 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema' })),
      { field: schemaPath, type: 'Forbidden', detail: costErrorMessage('x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema', this.total, staticEstimatedCrdCostLimit) },
    ];
  }
}
