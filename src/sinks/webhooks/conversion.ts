import type { KubeObject } from '../../types.js';
import { cloneJson, jsonEqual } from '../../util/json.js';
import type { ConversionRequest, ConversionResponse } from './reviewTypes.js';

/**
 * Conversion between the versions of a custom resource, hub and spokes as
 * in controller-runtime: each spoke version converts to the hub and back,
 * so a spoke-to-spoke conversion goes through the hub. The converted object
 * gets the desired `apiVersion` whatever the function returns. The review
 * fails as a whole (no object converted) when one object cannot be: its
 * kind or version is not known, a function throws, or a function changed
 * metadata other than labels and annotations, which kube-apiserver refuses.
 */

/** Converts an object of one version (`From`) to another (`To`). */
export type ConvertFunction<From extends KubeObject = KubeObject, To extends KubeObject = KubeObject> = (object: From, signal: AbortSignal) => To | Promise<To>;

/**
 * The two conversions of a spoke version: `toHub` from its objects
 * (`Spoke`) to the hub's (`Hub`), `fromHub` back. Methods, so that
 * conversions typed for their versions' objects (`PodAutoscalerV2` to
 * `PodAutoscaler`) pass where any spoke is taken (method parameters are
 * compared both ways, as `Typed`'s): the server only ever hands `toHub` an
 * object of the spoke's version, and `fromHub` one of the hub's.
 */
export interface ConversionSpoke<Spoke extends KubeObject = KubeObject, Hub extends KubeObject = KubeObject> {
  /** An object of the spoke version, as the hub's. */
  toHub(object: Spoke, signal: AbortSignal): Hub | Promise<Hub>;
  /** An object of the hub version, as the spoke's. */
  fromHub(object: Hub, signal: AbortSignal): Spoke | Promise<Spoke>;
}

/** The versions of one kind: the hub and, for each spoke version, its two conversions. */
export interface ConversionDefinition {
  /** The API group of the custom resource, as in its `apiVersion` before the slash. */
  group: string;
  /** The kind the conversions apply to, as in objects' `kind`. */
  kind: string;
  /** The version all others convert through (`v2`, say). */
  hub: string;
  /** Per version other than the hub: `toHub` converts an object of that version to the hub, `fromHub` back; the result's `apiVersion` is set for you. */
  spokes: Record<string, ConversionSpoke>;
}

/** A conversion endpoint for the webhook server, made by `conversionWebhook`. */
export interface ConversionWebhook {
  /** Tells the webhook server this endpoint answers `ConversionReview`s. */
  readonly type: 'conversion';
  /** The response to one request; never throws: a failure is a `Failure` result that names the object. */
  convert(request: ConversionRequest, signal: AbortSignal): Promise<ConversionResponse>;
}

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? { group: '', version: apiVersion } : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

class ConversionFailure extends Error {}

function describe(object: KubeObject): string {
  const { namespace, name } = object.metadata ?? {};
  return `${object.kind ?? 'object'} ${namespace !== undefined ? `${namespace}/` : ''}${name ?? '(no name)'}`;
}

const fixedMetadata = ['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'finalizers', 'ownerReferences'] as const;

function checkMetadata(before: KubeObject, after: KubeObject, what: string): void {
  if (typeof after !== 'object' || after === null || typeof after.metadata !== 'object' || after.metadata === null) {
    throw new ConversionFailure(`${what}: the conversion returned ${JSON.stringify(after)}, not an object with metadata`);
  }
  for (const field of fixedMetadata) {
    if (!jsonEqual(before.metadata[field], after.metadata[field])) {
      throw new ConversionFailure(`${what}: the conversion changed metadata.${field}, which only labels and annotations may differ in`);
    }
  }
}

async function convertOne(definitions: readonly ConversionDefinition[], object: KubeObject, desired: string, signal: AbortSignal): Promise<KubeObject> {
  const what = describe(object);
  if (typeof object !== 'object' || object === null || typeof object.apiVersion !== 'string' || typeof object.kind !== 'string') {
    throw new ConversionFailure(`${what}: an object to convert needs apiVersion and kind`);
  }
  const from = splitApiVersion(object.apiVersion);
  const to = splitApiVersion(desired);
  if (from.group !== to.group) throw new ConversionFailure(`${what}: cannot convert from group ${from.group} to group ${to.group}`);
  const definition = definitions.find((d) => d.group === from.group && d.kind === object.kind);
  if (definition === undefined) throw new ConversionFailure(`${what}: no conversion is registered for kind ${object.kind} in group ${from.group}`);
  const known = (version: string): boolean => version === definition.hub || Object.hasOwn(definition.spokes, version);
  for (const version of [from.version, to.version]) {
    if (!known(version)) {
      throw new ConversionFailure(`${what}: version ${version} of ${object.kind} is unknown (hub ${definition.hub}, spokes ${Object.keys(definition.spokes).join(', ') || 'none'})`);
    }
  }
  if (from.version === to.version) return object;
  let current = cloneJson(object);
  const step = async (fn: ConvertFunction, label: string): Promise<void> => {
    let next: KubeObject;
    try {
      next = await fn(current, signal);
    } catch (error) {
      throw new ConversionFailure(`${what}: ${label} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    checkMetadata(object, next, what);
    current = next;
  };
  // known() checked both versions: one that is not the hub is a spoke.
  const spoke = (version: string) => definition.spokes[version] as ConversionSpoke;
  if (from.version !== definition.hub) await step((o, s) => spoke(from.version).toHub(o, s), `converting ${from.version} to the hub ${definition.hub}`);
  if (to.version !== definition.hub) await step((o, s) => spoke(to.version).fromHub(o, s), `converting the hub ${definition.hub} to ${to.version}`);
  return { ...current, apiVersion: desired, kind: object.kind };
}

/** An endpoint that converts the kinds `definitions` name. */
export function conversionWebhook(definitions: readonly ConversionDefinition[]): ConversionWebhook {
  return {
    type: 'conversion',
    async convert(request, signal) {
      try {
        const convertedObjects: KubeObject[] = [];
        for (const object of request.objects) convertedObjects.push(await convertOne(definitions, object, request.desiredAPIVersion, signal));
        return { uid: request.uid, convertedObjects, result: { status: 'Success' } };
      } catch (error) {
        if (!(error instanceof ConversionFailure)) throw error;
        return { uid: request.uid, convertedObjects: [], result: { status: 'Failure', message: error.message } };
      }
    },
  };
}
