/** An example the main job names: what it shows, and the command that runs it on its own. */
export interface CatalogEntry {
  name: string;
  about: string;
  command: string;
}

/** Every example of the repository; the main job runs the first and lists them all. */
export const exampleCatalog: readonly CatalogEntry[] = [
  { name: 'podautoscaler', about: 'sets the replicas of a Deployment (CRD, finalizer, webhooks); what this job runs', command: 'npx tsx examples/podautoscaler/main.ts' },
  { name: 'configmap-rollout', about: 'rolls Deployments out when a ConfigMap they use changes', command: 'npx tsx examples/configmap-rollout/main.ts' },
  { name: 'leader-elected', about: 'the podautoscaler as replicas under leader election', command: 'npx tsx examples/leader-elected/main.ts' },
  { name: 'gitsync', about: 'GitOps: keeps the manifests of a Git repository applied, prunes, corrects drift', command: 'npx tsx examples/gitsync/main.ts' },
];

/** The list of examples, as `--help` and the job's first lines show it. */
export function catalogText(): string {
  const width = Math.max(...exampleCatalog.map((e) => e.name.length)) + 2;
  return ['examples (each also runs on its own):', ...exampleCatalog.map((e) => `  ${e.name.padEnd(width)}${e.about}\n  ${' '.repeat(width)}${e.command}`), ''].join('\n');
}
