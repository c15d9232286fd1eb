import { randomInt } from 'node:crypto';
import type { ObjectMeta } from '../../types.js';
import { isPlainObject } from '../../util/json.js';
import { labelKeyErrors, labelValueErrors, subdomainErrors } from '../selectors/labelValidation.js';
import type { ResourceType } from '../api/resourceType.js';
import type { FieldError } from '../api/statusError.js';

/** Checks of `metadata` on create and update, with kube's field paths and wording. */

// kube leaves out vowels and look-alike digits so generated names spell no words.
const generatedAlphabet = 'bcdfghjklmnpqrstvwxz2456789';
const maxGenerateNameLength = 58;

export function generateName(base: string): string {
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += generatedAlphabet[randomInt(generatedAlphabet.length)];
  return `${base.slice(0, maxGenerateNameLength)}${suffix}`;
}

const labelFormat = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1035Format = '[a-z]([-a-z0-9]*[a-z0-9])?';

/** Problems with a 63-character DNS label of `format`, worded as kube words them. */
function dnsLabelErrors(value: string, format: string, description: string, examples: string): string[] {
  const errors: string[] = [];
  if (value.length > 63) errors.push('must be no more than 63 characters');
  if (!new RegExp(`^${format}$`).test(value)) {
    errors.push(`${description} (e.g. ${examples}, regex used for validation is '${format}')`);
  }
  return errors;
}

export function nameErrors(type: ResourceType, name: string): string[] {
  if (type.builtin && type.group === '' && type.resource === 'namespaces') {
    return dnsLabelErrors(
      name,
      labelFormat,
      "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
      "'my-name',  or '123-abc'",
    );
  }
  if (type.builtin && type.group === '' && type.resource === 'services') {
    return dnsLabelErrors(
      name,
      dns1035Format,
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
      "'my-name',  or 'abc-123'",
    );
  }
  if (name === '.' || name === '..') return [`may not be '${name}'`];
  if (name.includes('/') || name.includes('%')) return [`may not contain '${name.includes('/') ? '/' : '%'}'`];
  // RBAC names need only be path segments (`system:discovery`), as kube's ValidateRBACName says.
  if (type.builtin && type.group === 'rbac.authorization.k8s.io') return [];
  return subdomainErrors(name);
}

function stringMapErrors(field: string, value: unknown, checkValue: boolean): FieldError[] {
  if (value === undefined || value === null) return [];
  if (!isPlainObject(value)) return [{ field, type: 'Invalid value', value, detail: 'must be a map of strings' }];
  const errors: FieldError[] = [];
  for (const [key, entry] of Object.entries(value)) {
    for (const detail of labelKeyErrors(key)) errors.push({ field, type: 'Invalid value', value: key, detail });
    if (typeof entry !== 'string') {
      errors.push({ field: `${field}[${key}]`, type: 'Invalid value', value: entry, detail: 'must be a string' });
    } else if (checkValue) {
      for (const detail of labelValueErrors(entry)) errors.push({ field, type: 'Invalid value', value: entry, detail });
    }
  }
  return errors;
}

/** kube's TotalAnnotationSizeLimitB: the keys and values of all annotations, in bytes. */
export const maxAnnotationBytes = 256 * 1024;

function annotationSizeErrors(value: unknown): FieldError[] {
  if (!isPlainObject(value)) return [];
  let size = 0;
  for (const [key, entry] of Object.entries(value)) size += Buffer.byteLength(key) + (typeof entry === 'string' ? Buffer.byteLength(entry) : 0);
  return size > maxAnnotationBytes ? [{ field: 'metadata.annotations', type: 'Too long', detail: `may not be more than ${maxAnnotationBytes} bytes` }] : [];
}

function ownerReferenceErrors(value: unknown): FieldError[] {
  if (value === undefined || value === null) return [];
  const field = 'metadata.ownerReferences';
  if (!Array.isArray(value)) return [{ field, type: 'Invalid value', value, detail: 'must be a list' }];
  const errors: FieldError[] = [];
  let controllers = 0;
  value.forEach((ref: unknown, i) => {
    if (!isPlainObject(ref)) {
      errors.push({ field: `${field}[${i}]`, type: 'Invalid value', value: ref, detail: 'must be an object' });
      return;
    }
    for (const part of ['apiVersion', 'kind', 'name', 'uid'] as const) {
      if (typeof ref[part] !== 'string' || ref[part] === '') {
        errors.push({ field: `${field}.${part}`, type: 'Invalid value', value: ref[part] ?? '', detail: `${part} must not be empty` });
      }
    }
    if (ref.controller === true) controllers += 1;
  });
  if (controllers > 1) {
    errors.push({ field, type: 'Invalid value', value, detail: 'Only one reference can have Controller set to true' });
  }
  return errors;
}

/** What is wrong with the metadata of an object about to be stored (empty when nothing). */
export function metadataErrors(type: ResourceType, meta: ObjectMeta): FieldError[] {
  const errors: FieldError[] = [];
  const name = meta.name ?? '';
  if (name === '') {
    errors.push({ field: 'metadata.name', type: 'Required value', detail: 'name or generateName is required' });
  } else {
    for (const detail of nameErrors(type, name)) errors.push({ field: 'metadata.name', type: 'Invalid value', value: name, detail });
  }
  errors.push(...stringMapErrors('metadata.labels', meta.labels, true));
  errors.push(...stringMapErrors('metadata.annotations', meta.annotations, false), ...annotationSizeErrors(meta.annotations));
  errors.push(...ownerReferenceErrors(meta.ownerReferences));
  const finalizers: unknown = meta.finalizers;
  if (finalizers !== undefined && finalizers !== null) {
    if (!Array.isArray(finalizers) || finalizers.some((f) => typeof f !== 'string')) {
      errors.push({ field: 'metadata.finalizers', type: 'Invalid value', value: finalizers, detail: 'must be a list of strings' });
    } else {
      for (const f of finalizers as string[]) {
        for (const detail of labelKeyErrors(f)) errors.push({ field: 'metadata.finalizers', type: 'Invalid value', value: f, detail });
      }
    }
  }
  return errors;
}

/** A manager name from a User-Agent, as kube derives it when no fieldManager is given: the part before the first `/`. */
export function managerFromUserAgent(userAgent: string | undefined): string {
  const name = (userAgent ?? '').split('/')[0].trim();
  return name === '' ? 'unknown' : name.slice(0, 128);
}
