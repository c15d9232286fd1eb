/**
 * Kubernetes' validation of label keys and values (apimachinery `IsQualifiedName` and
 * `IsValidLabelValue`), with kube 1.32's messages, so that errors read as kube-apiserver's do.
 *
 * - key: `[prefix/]name`; the optional prefix is a lowercase RFC 1123 subdomain of at most 253
 *   characters, the name at most 63 characters of `[A-Za-z0-9_.-]` starting and ending with an
 *   alphanumeric; at most one `/`.
 * - value: empty, or at most 63 characters of the same alphabet as a key's name part.
 *
 * Lengths are counted in UTF-8 bytes, as Go's `len` does; any non-ASCII character fails the
 * pattern anyway.
 */

const nameFormat = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const nameMessage =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const namePattern = new RegExp(`^${nameFormat}$`);
const valueFormat = `(${nameFormat})?`;
const valuePattern = new RegExp(`^${valueFormat}$`);
const valueMessage =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const subdomainFormat = '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';
const subdomainPattern = new RegExp(`^${subdomainFormat}$`);
const subdomainMessage =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

const maxNameLength = 63;
const maxSubdomainLength = 253;

/** Kube's wording of a failed pattern, examples included (the doubled spaces are kube's). */
export function regexError(message: string, format: string, ...examples: string[]): string {
  if (examples.length === 0) return `${message} (regex used for validation is '${format}')`;
  return `${message} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${format}')`;
}

function maxLengthError(length: number): string {
  return `must be no more than ${length} characters`;
}

function byteLength(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** Problems with a DNS-1123 subdomain (e.g. a label key's prefix); empty when it is valid. */
export function subdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > maxSubdomainLength) errors.push(maxLengthError(maxSubdomainLength));
  if (!subdomainPattern.test(value)) errors.push(regexError(subdomainMessage, subdomainFormat, 'example.com'));
  return errors;
}

/** Problems with a label key (a "qualified name"); empty when it is valid. */
export function labelKeyErrors(key: string): string[] {
  const parts = key.split('/');
  const errors: string[] = [];
  let name: string;
  if (parts.length === 1) {
    name = key;
  } else if (parts.length === 2) {
    const [prefix, rest] = parts as [string, string];
    name = rest;
    if (prefix.length === 0) errors.push('prefix part must be non-empty');
    else errors.push(...subdomainErrors(prefix).map((e) => `prefix part ${e}`));
  } else {
    return [
      `a qualified name ${regexError(nameMessage, nameFormat, 'MyName', 'my.name', '123-abc')}` +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errors.push('name part must be non-empty');
  else if (byteLength(name) > maxNameLength) errors.push(`name part ${maxLengthError(maxNameLength)}`);
  if (!namePattern.test(name)) errors.push(`name part ${regexError(nameMessage, nameFormat, 'MyName', 'my.name', '123-abc')}`);
  return errors;
}

/** Problems with a label value; empty when it is valid (the empty string is valid). */
export function labelValueErrors(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > maxNameLength) errors.push(maxLengthError(maxNameLength));
  if (!valuePattern.test(value)) errors.push(regexError(valueMessage, valueFormat, 'MyValue', 'my_value', '12345'));
  return errors;
}
