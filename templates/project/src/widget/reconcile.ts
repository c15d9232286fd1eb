import { finalizer, findCondition, setCondition, setControllerReference, type ControllerContext, type KubeObject, type ObjectKey } from 'rxkube';
import { GROUP, type Deployment, type Widget } from './resource.js';

/** The finalizer that keeps a Widget until its entry in the namespace's directory is gone. */
export const FINALIZER = `${GROUP}/widget-directory`;
/** The ConfigMap that lists every Widget of a namespace with its URL: shared by all of them, so owned by none. */
export const DIRECTORY = 'widget-directory';

/**
 * Drives a Widget's Deployment, Service and directory entry towards its
 * spec, and reports what it found in `status`. Level-triggered: it compares
 * what should be with the cache and the server, so a rerun changes nothing
 * that is already right.
 */
export async function reconcileWidget(_key: ObjectKey, ctx: ControllerContext<Widget>): Promise<void> {
  const widget = ctx.object;
  if (widget === undefined) return; // gone: its finalizer ran before it went
  // The first run adds the finalizer; while the object lives, `apply`; once it is being deleted, `cleanup`, then the finalizer goes.
  await finalizer(ctx.client, FINALIZER, widget, { apply: (live) => apply(live, ctx), cleanup: (live) => cleanup(live, ctx) }, { signal: ctx.signal });
}

async function apply(widget: Widget, ctx: ControllerContext<Widget>): Promise<void> {
  const name = widget.metadata.name as string;
  const namespace = widget.metadata.namespace as string;
  const labels = { 'app.kubernetes.io/name': name, 'app.kubernetes.io/managed-by': 'widget-controller' };
  const { signal } = ctx;
  // Server-side apply, owned by the Widget: a field changed by hand comes back, and both go when the Widget goes.
  const deployment = await ctx.client.apply(
    setControllerReference(widget, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name, namespace, labels },
      spec: {
        replicas: widget.spec.replicas,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: [{ name: 'main', image: widget.spec.image, ports: [{ containerPort: widget.spec.port }] }] } },
      },
    } as Deployment),
    { force: true, signal },
  );
  await ctx.client.apply(
    setControllerReference(widget, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name, namespace, labels },
      spec: { selector: labels, ports: [{ name: 'http', port: 80, targetPort: widget.spec.port }] },
    } as KubeObject),
    { force: true, signal },
  );
  await setDirectoryEntry(widget, `http://${name}.${namespace}.svc`, ctx);

  // The status, written only when what it says changes; setCondition moves lastTransitionTime only when the status moves.
  const available = deployment.status?.availableReplicas ?? 0;
  const ready = available >= widget.spec.replicas;
  const message = `${available} of ${widget.spec.replicas} replicas available`;
  const was = findCondition(widget.status?.conditions, 'Ready');
  if (widget.status?.observedGeneration === widget.metadata.generation && was?.status === (ready ? 'True' : 'False') && was.message === message) return;
  const conditions = setCondition(widget.status?.conditions, {
    type: 'Ready',
    status: ready ? 'True' : 'False',
    reason: ready ? 'Available' : 'Progressing',
    message,
    observedGeneration: widget.metadata.generation,
  });
  await ctx.client.patchStatus(widget, { status: { observedGeneration: widget.metadata.generation, availableReplicas: available, conditions } }, { signal });
  if (ready && was?.status !== 'True') ctx.recorder.record(widget, { type: 'Normal', reason: 'Available', action: 'Reconcile', note: message });
}

async function cleanup(widget: Widget, ctx: ControllerContext<Widget>): Promise<void> {
  // The Deployment and Service go with the Widget (their owner reference); the directory entry would not.
  await setDirectoryEntry(widget, null, ctx);
  ctx.recorder.record(widget, { type: 'Normal', reason: 'Unlisted', action: 'Cleanup', note: `removed from ${DIRECTORY}` });
}

/** Sets (or, with `null`, removes) the Widget's line in the namespace's directory, creating the directory once. */
async function setDirectoryEntry(widget: Widget, url: string | null, ctx: ControllerContext<Widget>): Promise<void> {
  const directory = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: DIRECTORY, namespace: widget.metadata.namespace } };
  const key = widget.metadata.name as string;
  await ctx.client.createOrUpdate<KubeObject & { data?: Record<string, string> }>(
    directory,
    (live) => {
      const data = { ...live.data };
      if (url === null) delete data[key];
      else data[key] = url;
      live.data = data;
    },
    { signal: ctx.signal },
  );
}
