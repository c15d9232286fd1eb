import { KubeConfig } from '@kubernetes/client-node';
import { stat } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { checkControllerAccess, type ControllerPermission } from '../controller/permissions.js';
import type { RunControllerOptions } from '../controller/runController.js';
import type { RunPipelineOptions } from '../controller/runPipeline.js';
import type { WatchedResource } from '../controller/controller.js';
import type { KubeObject } from '../types.js';
import { isCustomResource, type DefinedCustomResource } from '../customResources/defineCustomResource.js';
import { importModule, TypeScriptLoaderMissing } from '../util/importModule.js';

/**
 * A controller definition: what a controller module exports for `rxkube
 * manifests` (which derives the Deployment, RBAC, CRDs and webhook
 * configurations from it) and `rxkube run` (which runs it in the image):
 *
 *   export function definition(kubeConfig: KubeConfig, where: { namespace: string }) {
 *     return { ...podAutoscalerOptions(kubeConfig, { namespace: where.namespace }), crds: [podAutoscalerCrd()] };
 *   }
 *
 * A function, so that exporting it starts nothing: it returns
 * `runController()`'s options (the controller's wiring, `permissions`,
 * `leaderElection`, `gracePeriod`, `health`, `webhooks`) and the
 * CustomResourceDefinitions the controller serves. `where.namespace` is
 * the namespace it is deployed to (`POD_NAMESPACE` when it runs).
 */
export type ControllerDefinition<T extends KubeObject = KubeObject> = (kubeConfig: KubeConfig, where: { namespace: string }) => DefinedController<T> | DefinedPipeline;

/** A CRD a definition serves: the object, or what `defineCustomResource` made (its `crd`). */
export type DefinedCrd = KubeObject | DefinedCustomResource;

/**
 * What a definition of a builder controller returns: `runController()`'s
 * options and its CRDs. `T` is the type of its objects, as in those
 * options, so that a definition of a typed controller (`ControllerOptions<WebApp>`)
 * is a `ControllerDefinition<WebApp>` without a cast.
 */
export type DefinedController<T extends KubeObject = KubeObject> = RunControllerOptions<T> & { crds?: readonly DefinedCrd[] };

/**
 * What a definition of a hand-composed pipeline returns: the pipeline, and
 * what `rxkube manifests` cannot read from code it does not run: the
 * resources it lists and watches and what else it writes.
 */
export interface DefinedPipeline extends Omit<RunPipelineOptions, 'kubeConfig' | 'handleSignals'> {
  /**
   * The resource whose keys it reconciles: listed and watched, and where its
   * Events go and its `permissions` apply unless they say otherwise.
   */
  for: WatchedResource;
  /** The other resources it lists and watches (its owned and watched kinds). */
  informers?: readonly WatchedResource[];
  /** What it writes, as `controller()`'s `permissions` (checked the same way). */
  permissions?: readonly ControllerPermission[];
  /** The CustomResourceDefinitions it serves (objects, or what `defineCustomResource` made). */
  crds?: readonly DefinedCrd[];
}

/** The CRD objects of a definition's `crds`. */
export function crdObjects(crds: readonly DefinedCrd[] | undefined): KubeObject[] {
  return (crds ?? []).map((c) => (isCustomResource(c) ? c.crd : c));
}

/** Whether a definition returned a hand-composed pipeline rather than a builder controller's options. */
export function isPipeline(defined: DefinedController | DefinedPipeline): defined is DefinedPipeline {
  return typeof (defined as Partial<DefinedPipeline>).pipeline === 'function';
}

/** A module path that does not hold a definition, or a definition of the wrong shape: a usage error (exit 2). */
export class DefinitionError extends Error {
  override readonly name = 'DefinitionError';
}

/** A kubeconfig that reaches nothing: `rxkube manifests` calls the definition only to read its options. */
export function placeholderKubeConfig(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'manifests', server: 'https://kubernetes.default.svc', skipTLSVerify: false }],
    users: [{ name: 'manifests' }],
    contexts: [{ name: 'manifests', cluster: 'manifests', user: 'manifests' }],
    currentContext: 'manifests',
  });
  return kubeConfig;
}

/** What a module may be: JavaScript, or TypeScript through tsx. */
const moduleExtensions: readonly string[] = ['.js', '.mjs', '.cjs', '.ts', '.mts', '.cts'];

/**
 * Imports `path` (a `.ts` module through tsx, which must then be installed;
 * see `importModule`) and returns its `definition` export. What is no
 * module at all (a directory, a text file, a file that does not parse) is a
 * `DefinitionError`; what the module throws as it runs, as it threw it.
 */
export async function loadDefinition(path: string): Promise<ControllerDefinition> {
  const file = resolve(path);
  const found = await stat(file).catch(() => undefined);
  if (found === undefined) throw new DefinitionError(`no module at ${file}`);
  if (!found.isFile()) throw new DefinitionError(`${path} is ${found.isDirectory() ? 'a directory' : 'not a file'}, not a module`);
  if (!moduleExtensions.includes(extname(file))) throw new DefinitionError(`${path} is not a module: its name must end in ${moduleExtensions.join(', ')}`);
  let module: Record<string, unknown>;
  try {
    module = await importModule(file);
  } catch (err) {
    if (err instanceof TypeScriptLoaderMissing) throw new DefinitionError(err.message);
    // A file that does not parse is no module; an error it throws as it runs is the module's own (exit 1).
    if (err instanceof SyntaxError && !isRunTimeError(err, file)) throw new DefinitionError(`${path} is not a module that parses: ${err.message}`);
    throw err;
  }
  const definition = module.definition;
  if (typeof definition !== 'function') {
    const has = Object.keys(module).filter((k) => k !== 'default');
    throw new DefinitionError(
      `${path} exports no definition function (export function definition(kubeConfig, { namespace }) returning runController's options); it exports ${has.length > 0 ? has.join(', ') : 'nothing'}`,
    );
  }
  return definition as ControllerDefinition;
}

/** A SyntaxError the module's own code threw as it ran (`JSON.parse` of bad text, say), not one of parsing the module: a frame of its stack is in the module. */
function isRunTimeError(err: Error, file: string): boolean {
  const url = pathToFileURL(file).href;
  return (err.stack ?? '').split('\n').some((line) => /^\s+at /.test(line) && (line.includes(`${url}:`) || line.includes(`${file}:`)));
}

/** Calls the definition and checks what it returned: a name, a primary resource, a reconcile or a pipeline, CRDs as objects. */
export function define<T extends KubeObject>(definition: ControllerDefinition<T>, kubeConfig: KubeConfig, namespace: string): DefinedController | DefinedPipeline {
  // What it returned is checked below, whatever its type says (a module's definition is JavaScript as often as not).
  const defined = definition(kubeConfig, { namespace }) as unknown as Partial<DefinedController & DefinedPipeline> | undefined;
  if (defined === null || typeof defined !== 'object') throw new DefinitionError(`the definition returned ${JSON.stringify(defined)}, not runController's options`);
  if (typeof defined.name !== 'string' || defined.name === '') throw new DefinitionError('the definition returned no name');
  const primary = defined.for;
  if (primary === undefined || typeof primary.resource !== 'string' || typeof primary.version !== 'string' || typeof primary.kind !== 'string') {
    throw new DefinitionError(`the definition of "${defined.name}" needs for: { group, version, resource, kind }`);
  }
  if (typeof defined.reconcile !== 'function' && typeof defined.pipeline !== 'function') {
    throw new DefinitionError(`the definition of "${defined.name}" has neither a reconcile function nor a pipeline (a function of its context to an Observable of outcomes)`);
  }
  if (typeof defined.reconcile === 'function' && typeof defined.pipeline === 'function') {
    throw new DefinitionError(`the definition of "${defined.name}" has both a reconcile and a pipeline: a builder controller or a hand-composed one, not both`);
  }
  const informers: unknown = defined.informers;
  if (informers !== undefined && (!Array.isArray(informers) || informers.some((r: Partial<WatchedResource>) => typeof r?.resource !== 'string' || typeof r.version !== 'string'))) {
    throw new DefinitionError(`the definition of "${defined.name}": informers must be resources ({ group, version, resource, kind })`);
  }
  try {
    // The check controller() runs, for a pipeline's declared informers as for a builder's owned ones.
    const pipelineAccess = { name: defined.name, for: primary, owns: [...(defined.informers ?? [])], permissions: defined.permissions };
    checkControllerAccess(typeof defined.pipeline === 'function' ? pipelineAccess : (defined as DefinedController));
  } catch (err) {
    throw new DefinitionError(`the definition of "${defined.name}": ${(err as Error).message}`);
  }
  if (defined.crds !== undefined && (!Array.isArray(defined.crds) || defined.crds.some((c: DefinedCrd) => !isCustomResource(c) && c?.kind !== 'CustomResourceDefinition'))) {
    throw new DefinitionError(`the definition of "${defined.name}": crds must be CustomResourceDefinition objects or what defineCustomResource made`);
  }
  return defined as DefinedController | DefinedPipeline;
}
