import { celFunc, celMethod, CelScalar, isCelMap, mapType, type CelFunc, type CelMap } from '@bufbuild/cel';
import { labelKeyErrors, labelValueErrors, regexError, subdomainErrors } from '../../selectors/labelValidation.js';
import { stringFormatCheck } from '../formats.js';
import { parseUrl } from './url.js';

/**
 * kube's CEL `format` library (in CRD rules since 1.31): `format.named(n)`
 * (an optional format) and `format.dns1123Label()` and its siblings, and
 * `<format>.validate(s)`, which gives none for a valid string and else an
 * optional list of kube's messages (apimachinery's for names and labels,
 * go-openapi's checks for uri, uuid, byte, date and datetime).
 */

const labelFormat = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const labelMessage = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const dns1035Format = '[a-z]([-a-z0-9]*[a-z0-9])?';
const dns1035Message = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";

function label(value: string, format: string, message: string, ...examples: string[]): string[] {
  const errors: string[] = [];
  if (Buffer.byteLength(value) > 63) errors.push('must be no more than 63 characters');
  if (!new RegExp(`^${format}$`).test(value)) errors.push(regexError(message, format, ...examples));
  return errors;
}

/** kube's prefix names (generateName) may end in a dash: it is masked before the check, as apimachinery does. */
function masked(value: string): string {
  return value.length > 1 && value.endsWith('-') ? `${value.slice(0, -2)}a` : value;
}

function strfmt(format: string, message: string): (value: string) => string[] {
  const check = stringFormatCheck(format);
  return (value) => (check === undefined || check(value) ? [] : [message]);
}

const dns1123Label = (v: string): string[] => label(v, labelFormat, labelMessage, 'my-name', '123-abc');
const dns1035Label = (v: string): string[] => label(v, dns1035Format, dns1035Message, 'my-name', 'abc-123');

export const formats: Readonly<Record<string, (value: string) => string[]>> = {
  dns1123Label,
  dns1123Subdomain: subdomainErrors,
  dns1035Label,
  qualifiedName: labelKeyErrors,
  dns1123LabelPrefix: (v) => dns1123Label(masked(v)),
  dns1123SubdomainPrefix: (v) => subdomainErrors(masked(v)),
  dns1035LabelPrefix: (v) => dns1035Label(masked(v)),
  labelValue: labelValueErrors,
  uri: (v) => (parseUrl(v) === undefined ? [`parse ${JSON.stringify(v)}: invalid URI for request`] : []),
  uuid: strfmt('uuid', 'does not match the UUID format'),
  byte: strfmt('byte', 'invalid base64'),
  date: strfmt('date', 'invalid date'),
  datetime: strfmt('date-time', 'invalid datetime'),
};

const formatTag = '@kubernetes.Format';
const MAP = mapType(CelScalar.STRING, CelScalar.DYN);

/** How the library's optionals are made (library.ts owns their form). */
export type Optional = (value: unknown) => Record<string, unknown>;

export function formatFunctions(optional: Optional): CelFunc[] {
  const formatValue = (name: string): Record<string, string> => ({ [formatTag]: name });
  return [
    celFunc('format.named', [CelScalar.STRING], MAP, (name: string) => optional(Object.hasOwn(formats, name) ? formatValue(name) : undefined) as never),
    ...Object.keys(formats).map((name) => celFunc(`format.${name}`, [], MAP, () => formatValue(name))),
    celMethod('validate', MAP, [CelScalar.STRING], MAP, function validate(this: CelMap, value: string) {
      const name = isCelMap(this) ? this.get(formatTag) : undefined;
      const check = typeof name === 'string' ? formats[name] : undefined;
      if (check === undefined) throw new Error("found no matching overload for 'validate'");
      const errors = check(value);
      return optional(errors.length === 0 ? undefined : errors) as never;
    }),
  ];
}
