import { findCondition, type KubeClient } from 'rxkube';
import { until } from '../until.js';
import { Widget, type Deployment } from './resource.js';

/**
 * Creates a sample Widget in `namespace` (`widget-sample`, as `kubectl
 * apply` would) and waits until it reports Ready, playing the part of
 * the Deployment controller, which the embedded API server does not run:
 * it sets the owned Deployment's `availableReplicas`. Returns what the
 * Widget's Ready condition says. `npm start` runs it on the embedded API
 * server; src/rbac.test.ts, with the controller as its ServiceAccount.
 */
export async function convergeWidget(client: KubeClient, namespace: string): Promise<string> {
  const name = 'widget-sample';
  const sample = Widget.make({ metadata: { name, namespace }, spec: { image: 'nginx:1.27', replicas: 2, port: 8080 } });
  await client.apply(sample, { force: true });
  const target = { ...Widget.resource, namespace, name };
  const deployment = await until(`Deployment ${namespace}/${name}`, () => client.get<Deployment>({ apiVersion: 'apps/v1', kind: 'Deployment', namespace, name }).catch(() => undefined));
  await client.patchStatus(deployment, { status: { availableReplicas: deployment.spec?.replicas ?? 0 } });
  const ready = await until(`Widget ${namespace}/${name} to be Ready`, async () => {
    const condition = findCondition((await client.get(target)).status?.conditions, 'Ready');
    return condition?.status === 'True' ? condition.message : undefined;
  });
  return `Widget ${namespace}/${name} is Ready: ${ready ?? ''}`;
}
