import { isIPv6 } from 'node:net';

/**
 * The string formats kube-apiserver 1.32 checks in custom resources (the
 * set apiextensions-apiserver keeps; any other `format` is dropped from the
 * schema and never checked), each as the Go function behind it accepts
 * strings. The names are normalized as go-openapi does (`date-time` is
 * `datetime`).
 */

type Check = (value: string) => boolean;

const uuidPattern = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const uuid3Pattern = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const uuid4Pattern = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const uuid5Pattern = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const hostnamePattern =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$/u;
const base64Pattern = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const creditCardPattern = /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$/;
const rgbPart = '\\s*(0|[1-9]\\d?|1\\d\\d?|2[0-4]\\d|25[0-5])\\s*';
const rgbPattern = new RegExp(`^rgb\\(${rgbPart},${rgbPart},${rgbPart}\\)$`);
const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/;
const dateTimePattern = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))?$/;

function validDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) return false;
  return day <= new Date(Date.UTC(year, month, 0)).getUTCDate();
}

function isDate(value: string): boolean {
  const m = datePattern.exec(value);
  return m !== null && validDate(Number(m[1]), Number(m[2]), Number(m[3]));
}

/** strfmt.ParseDateTime: RFC 3339 with or without fractional seconds, or a local time without zone; "" parses too. */
function isDateTime(value: string): boolean {
  if (value === '') return true;
  const m = dateTimePattern.exec(value);
  if (m === null || !validDate(Number(m[1]), Number(m[2]), Number(m[3]))) return false;
  if (Number(m[4]) > 23 || Number(m[5]) > 59 || Number(m[6]) > 59) return false;
  return m[9] === undefined || (Number(m[9]) <= 23 && Number(m[10]) <= 59);
}

const goDurationPattern = /^[-+]?(0|((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+)$/;
const laxDurationPart = /(\d+)\s*([A-Za-zµ]+)/g;
const durationUnits: readonly (readonly string[])[] = [['ns', 'nano'], ['us', 'µs', 'micro'], ['ms', 'milli'], ['s', 'sec'], ['m', 'min'], ['h', 'hr', 'hour'], ['d', 'day'], ['w', 'wk', 'week']];

/** strfmt.ParseDuration: Go's time.ParseDuration, else any "<n> <unit>" it can find ("3 days", "1 hour"). */
function isDuration(value: string): boolean {
  if (goDurationPattern.test(value)) return true;
  for (const match of value.matchAll(laxDurationPart)) {
    const unit = (match[2] as string).toLowerCase();
    for (const variants of durationUnits) {
      const last = variants.length - 1;
      if (variants.some((variant, i) => (i === last && unit.startsWith(variant)) || variant === unit)) return true;
    }
  }
  return false;
}

/** net.ParseIP's IPv4 (leading zeros tolerated, as netutils.ParseIPSloppy does). */
function isIPv4Dotted(value: string): boolean {
  const parts = value.split('.');
  return parts.length === 4 && parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255);
}

function isIPv6Address(value: string): boolean {
  return !value.includes('%') && isIPv6(value);
}

function isIPv4(value: string): boolean {
  return isIPv4Dotted(value) || (value.includes('.') && isIPv6Address(value));
}

function isCidr(value: string): boolean {
  const slash = value.indexOf('/');
  if (slash === -1) return false;
  const address = value.slice(0, slash);
  const prefix = value.slice(slash + 1);
  if (!/^\d{1,3}$/.test(prefix)) return false;
  if (isIPv4Dotted(address)) return Number(prefix) <= 32;
  return isIPv6Address(address) && Number(prefix) <= 128;
}

/** net.ParseMAC: 6, 8 or 20 octets, colon or hyphen separated, or dotted groups of four hex digits. */
function isMac(value: string): boolean {
  const octets = (separator: string): boolean => {
    const parts = value.split(separator);
    return [6, 8, 20].includes(parts.length) && parts.every((p) => /^[0-9a-fA-F]{2}$/.test(p));
  };
  if (value.includes(':')) return octets(':');
  if (value.includes('-')) return octets('-');
  const groups = value.split('.');
  return [3, 4, 10].includes(groups.length) && groups.every((g) => /^[0-9a-fA-F]{4}$/.test(g));
}

function isHostname(value: string): boolean {
  return hostnamePattern.test(value) && value.length <= 255 && value.split('.').every((p) => p.length <= 63);
}

/** net/mail.ParseAddress, for the forms people write: `local@domain` or `Name <local@domain>`. */
function isEmail(value: string): boolean {
  const addrSpec = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@[A-Za-z0-9.-]+$/;
  const quotedLocal = /^"[^"\\]*"@[A-Za-z0-9.-]+$/;
  const check = (s: string): boolean => {
    if (quotedLocal.test(s)) return true;
    if (!addrSpec.test(s)) return false;
    const [local, domain] = s.split('@') as [string, string];
    const dotAtom = (part: string): boolean => part !== '' && !part.startsWith('.') && !part.endsWith('.') && !part.includes('..');
    return dotAtom(local) && dotAtom(domain);
  };
  const angle = /^[^<>]*<([^<>]+)>\s*$/.exec(value.trim());
  return check(angle === null ? value.trim() : (angle[1] as string));
}

/** net/url.ParseRequestURI: an absolute URI or an absolute path, no control characters or spaces. */
function isRequestUri(value: string): boolean {
  if (value === '*') return true;
  if (value === '' || /[\x00-\x20\x7f]/.test(value)) return false;
  if (value.startsWith('/')) return true;
  const scheme = /^[a-zA-Z][a-zA-Z0-9+.-]*:/.exec(value);
  if (scheme === null) return false;
  const rest = value.slice(scheme[0].length);
  if (!rest.startsWith('/')) return false;
  if (rest.startsWith('//')) {
    const authority = rest.slice(2).split(/[/?#]/)[0] as string;
    const host = authority.includes('@') ? authority.slice(authority.lastIndexOf('@') + 1) : authority;
    if (host.startsWith('[')) return /^\[[0-9a-fA-F:.]+\](:\d*)?$/.test(host);
    return /^[^:[\]]*(:\d*)?$/.test(host);
  }
  return true;
}

function luhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i -= 1) {
    let d = Number(digits[i]);
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

function isCreditCard(value: string): boolean {
  const digits = value.replace(/[\s-]/g, '');
  return creditCardPattern.test(digits) && luhn(digits);
}

function isIsbn10(value: string): boolean {
  const s = value.replace(/[\s-]/g, '');
  if (!/^(?:[0-9]{9}X|[0-9]{10})$/.test(s)) return false;
  let sum = 0;
  for (let i = 0; i < 9; i += 1) sum += (i + 1) * Number(s[i]);
  sum += s[9] === 'X' ? 100 : 10 * Number(s[9]);
  return sum % 11 === 0;
}

function isIsbn13(value: string): boolean {
  const s = value.replace(/[\s-]/g, '');
  if (!/^[0-9]{13}$/.test(s)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i += 1) sum += Number(s[i]) * (i % 2 === 0 ? 1 : 3);
  return (10 - (sum % 10)) % 10 === Number(s[12]);
}

const checks: Readonly<Record<string, Check>> = {
  bsonobjectid: (v) => /^[0-9a-fA-F]{24}$/.test(v),
  uri: isRequestUri,
  email: isEmail,
  hostname: isHostname,
  ipv4: isIPv4,
  ipv6: (v) => v.includes(':') && isIPv6Address(v),
  cidr: isCidr,
  mac: isMac,
  uuid: (v) => uuidPattern.test(v),
  uuid3: (v) => uuid3Pattern.test(v),
  uuid4: (v) => uuid4Pattern.test(v),
  uuid5: (v) => uuid5Pattern.test(v),
  isbn: (v) => isIsbn10(v) || isIsbn13(v),
  isbn10: isIsbn10,
  isbn13: isIsbn13,
  creditcard: isCreditCard,
  ssn: (v) => v.length === 11 && /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(v),
  hexcolor: (v) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(v),
  rgbcolor: (v) => rgbPattern.test(v),
  byte: (v) => base64Pattern.test(v),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime,
};

/** The check of a string format kube validates, or undefined for a format it ignores. */
export function stringFormatCheck(format: string): Check | undefined {
  return checks[format.replaceAll('-', '')];
}
