import { createLogUpdate } from 'log-update';
import { findCondition } from 'rxkube';
import { describeProblem, type ClusterState, type Problem } from './state.js';

/** What the demo knows at one moment. */
export interface Progress {
  step: number;
  steps: number;
  title: string;
  /** Ms since the step started. */
  elapsed: number;
  reconciles: { total: number; success: number; error: number };
  queueDepth: number;
  activeWorkers: number;
  state: ClusterState | undefined;
  /** What is not converged yet. */
  problems: readonly Problem[];
}

/** Where progress goes: a live panel on a terminal, plain lines elsewhere (CI logs). */
export interface Display {
  /** The latest progress; a panel redraws, plain output ignores it. */
  progress(progress: Progress): void;
  /** A line that stays: a step's result, a header. */
  line(text: string): void;
  close(): void;
}

export function createDisplay(stream: NodeJS.WriteStream): Display {
  // A pseudo-terminal with no size (a CI runner's) shows nothing of a panel: plain lines there.
  if (!stream.isTTY || !stream.rows || !stream.columns) {
    return { progress: () => {}, line: (text) => void stream.write(`${text}\n`), close: () => {} };
  }
  const panel = createLogUpdate(stream);
  let last: Progress | undefined;
  let closed = false;
  return {
    progress(progress) {
      if (closed) return;
      last = progress;
      panel(render(progress));
    },
    line(text) {
      if (closed) return void stream.write(`${text}\n`);
      panel.clear();
      stream.write(`${text}\n`);
      if (last !== undefined) panel(render(last));
    },
    close() {
      if (closed) return;
      closed = true;
      panel.clear();
      panel.done();
    },
  };
}

const dim = (s: string) => `\x1b[2m${s}\x1b[22m`;
const green = (s: string) => `\x1b[32m${s}\x1b[39m`;
const yellow = (s: string) => `\x1b[33m${s}\x1b[39m`;
const maxRows = 12;

function render(p: Progress): string {
  const lines: string[] = [];
  const converged = p.problems.length === 0 && p.state !== undefined;
  lines.push(`${dim(`step ${p.step}/${p.steps}`)} ${p.title} ${converged ? green('✓') : yellow(`… ${(p.elapsed / 1000).toFixed(1)} s`)}`);
  lines.push(
    `reconciles ${p.reconciles.total} (${p.reconciles.success} ok, ${p.reconciles.error} failed)   ` +
      `queue depth ${p.queueDepth}   in flight ${p.activeWorkers}`,
  );
  if (p.state !== undefined) {
    const pending = new Set(p.problems.map((problem) => problem.object));
    const objects = p.state.autoscalers.length + p.state.deployments.length;
    lines.push(`converged ${objects - pending.size}/${objects} objects (${p.state.autoscalers.length} PodAutoscalers, ${p.state.deployments.length} Deployments)`);
    const replicas = new Map(p.state.deployments.map((d) => [d.metadata.name, d.spec?.replicas ?? 1]));
    const rows = [...p.state.autoscalers].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''));
    lines.push(dim(`  ${'autoscaler'.padEnd(14)}${'target'.padEnd(10)}${'want'.padStart(5)}${'has'.padStart(5)}  ready`));
    for (const pa of rows.slice(0, maxRows)) {
      const ready = findCondition(pa.status?.conditions, 'Ready');
      const has = replicas.get(pa.spec?.targetDeployment);
      const gone = pa.metadata.deletionTimestamp ? ' (deleting)' : '';
      const mark = pending.has(`PodAutoscaler ${pa.metadata.name ?? ''}`) ? yellow('…') : green('✓');
      lines.push(
        `${mark} ${(pa.metadata.name ?? '').padEnd(14)}${String(pa.spec?.targetDeployment).padEnd(10)}${String(pa.spec?.replicas).padStart(5)}` +
          `${(has === undefined ? '-' : String(has)).padStart(5)}  ${ready?.reason ?? '-'}${gone}`,
      );
    }
    if (rows.length > maxRows) lines.push(dim(`… and ${rows.length - maxRows} more`));
  }
  for (const problem of p.problems.slice(0, 3)) lines.push(yellow(`  waiting: ${describeProblem(problem)}`));
  if (p.problems.length > 3) lines.push(yellow(`  … and ${p.problems.length - 3} more`));
  return lines.join('\n');
}
