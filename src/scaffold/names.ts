import { pluralOf } from '../customResources/defineCustomResource.js';
import { UsageError } from '../util/cli.js';

/**
 * The names a custom resource's kind gives a scaffolded API: checked as
 * kube checks a CRD's names (a kind is a DNS-1035 label once lower-cased,
 * `apiextensions` validation's words), and as PascalCase, since it also
 * names a TypeScript type.
 */

/** What one kind of a project is called, everywhere the templates name it. */
export interface KindNames {
  /** `WebApp`: the CRD's `kind` and the TypeScript type. */
  kind: string;
  /** `webapp`: the CRD's `singular`, the kind's folder under `src/`, the controller's name. */
  singular: string;
  /** `webapps`: the resource in URLs and RBAC rules. */
  plural: string;
}

const dns1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const dns1035Message = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/** kube's `IsDNS1035Label` messages for `value`, none when it is one. */
export function dns1035Errors(value: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push('must be no more than 63 characters');
  if (!dns1035.test(value)) errors.push(dns1035Message);
  return errors;
}

/**
 * Names the template's own code uses beside the kind's type: a kind of the
 * same name would declare it twice (`Deployment`, `Service`) or hide an
 * import (`Condition`, `KubeObject`, …).
 */
const taken = ['Api', 'ApiServer', 'ControllerContext', 'ControllerOptions', 'Deployment', 'Kube', 'KubeClient', 'KubeConfig', 'KubeObject', 'Logger', 'ObjectKey', 'ObjectOf', 'Service', 'Subscription', 'Type', 'WatchedResource'];

/** The names of `kind` (with `plural` when the English rule of `defineCustomResource` gets it wrong); a `UsageError` naming what kube or TypeScript would refuse. */
export function kindNames(kind: string, plural?: string): KindNames {
  const errors = dns1035Errors(kind.toLowerCase());
  if (errors.length > 0) throw new UsageError(`kind ${JSON.stringify(kind)}: may have mixed case, but should otherwise match: ${errors.join(',')}`);
  if (!/^[A-Z][A-Za-z0-9]*$/.test(kind)) throw new UsageError(`kind ${JSON.stringify(kind)}: must be PascalCase (a capital letter, then letters and digits, such as WebApp): it also names a TypeScript type`);
  if (kind.endsWith('List')) throw new UsageError(`kind ${JSON.stringify(kind)}: must not end in List, which kube reserves for the list kind (${kind}List)`);
  if (taken.includes(kind)) throw new UsageError(`kind ${JSON.stringify(kind)}: the generated code already uses that name (${taken.join(', ')}); choose another`);
  const singular = kind.toLowerCase();
  const names = { kind, singular, plural: plural ?? pluralOf(singular) };
  const pluralErrors = dns1035Errors(names.plural);
  if (pluralErrors.length > 0) throw new UsageError(`plural ${JSON.stringify(names.plural)}: ${pluralErrors.join(',')}`);
  return names;
}

const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** Checks an API group as kube checks a CRD's `spec.group`: a DNS-1123 subdomain with at least one dot. */
export function checkGroup(group: string): string {
  if (group.length > 253 || !group.split('.').every((label) => label.length <= 63 && dns1123Label.test(label))) {
    throw new UsageError(`group ${JSON.stringify(group)}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`);
  }
  if (!group.includes('.')) throw new UsageError(`group ${JSON.stringify(group)}: should be a domain with at least one dot`);
  return group;
}
