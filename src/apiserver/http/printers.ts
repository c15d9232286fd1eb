import { corePrinters } from './corePrinters.js';
import { groupPrinters } from './groupPrinters.js';
import type { Column } from './printerCells.js';

/**
 * The columns `kubectl get` prints for built-in kinds, as kube-apiserver's printers
 * (pkg/printers/internalversion) define them in 1.32: names, types, priorities (1: only with
 * `-o wide`) and how each cell is made, `<none>` and all. The server always fills every column;
 * kubectl hides those of priority 1 unless asked.
 */

/** Kube's columns for a built-in resource (`group/resource`), or undefined for the default Name and Age. */
export function builtinColumns(group: string, resource: string): Column[] | undefined {
  return (corePrinters[`${group}/${resource}`] ?? groupPrinters[`${group}/${resource}`])?.();
}
