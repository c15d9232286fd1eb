import type { ListTarget, ObjectTarget } from '../sinks/client/kubeClient.js';
import type { ObjectKey } from '../types.js';

/**
 * What a request addressed: the kind qualified by its group
 * (`Deployment.apps`, `ConfigMap`), and the object's key (none for a
 * list). The timeline names requests so, and replay matches calls to
 * recorded ones by it.
 */
export function addressed(target: ObjectTarget | ListTarget | undefined): { resource: string; objectKey: ObjectKey | undefined } {
  if (target === null || typeof target !== 'object') return { resource: '', objectKey: undefined };
  const apiVersion = typeof target.apiVersion === 'string' ? target.apiVersion : '';
  const kind = typeof target.kind === 'string' ? target.kind : '';
  const slash = apiVersion.indexOf('/');
  const resource = slash === -1 ? kind : `${kind}.${apiVersion.slice(0, slash)}`;
  const meta = 'metadata' in target && target.metadata !== null && typeof target.metadata === 'object' ? target.metadata : (target as { name?: unknown; namespace?: unknown });
  const name = typeof meta.name === 'string' ? meta.name : undefined;
  const namespace = typeof meta.namespace === 'string' && meta.namespace !== '' ? meta.namespace : undefined;
  return { resource, objectKey: name === undefined ? undefined : namespace === undefined ? name : `${namespace}/${name}` };
}


/**
 * The HTTP status a client method's successful answer stands for: 201 for
 * a create (or a `createOrUpdate` that created), 404 for a `remove` of an
 * object already gone, 200 otherwise.
 */
export function answerCode(verb: string, answer: unknown): number {
  if (verb === 'create') return 201;
  const result = answer !== null && typeof answer === 'object' && 'result' in answer ? answer.result : undefined;
  if (verb === 'createOrUpdate' && result === 'created') return 201;
  if (verb === 'remove' && result === 'absent') return 404;
  return 200;
}
