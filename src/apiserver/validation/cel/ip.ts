import { isIPv4, isIPv6 } from 'node:net';

/**
 * IP addresses and CIDRs as kube's CEL `ip()` and `cidr()` read them (Go's
 * netip, strictly): no leading zeros in IPv4, no zones, no IPv4-mapped IPv6
 * addresses; held as 16 bytes (IPv4 as its mapped form) plus the family.
 */

export interface Address {
  family: 4 | 6;
  /** 4 or 16 bytes. */
  bytes: number[];
}

export interface Prefix {
  address: Address;
  bits: number;
}

function v4Bytes(text: string): number[] | undefined {
  if (!isIPv4(text)) return undefined;
  const parts = text.split('.');
  if (parts.some((p) => p.length > 1 && p.startsWith('0'))) return undefined;
  return parts.map(Number);
}

function v6Bytes(text: string): number[] | undefined {
  if (text.includes('%') || !isIPv6(text)) return undefined;
  let head = text;
  let tailV4: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    const v4 = v4Bytes(text.slice(lastColon + 1));
    if (v4 === undefined) return undefined;
    tailV4 = v4;
    head = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const [left, right] = head.includes('::') ? (head.split('::') as [string, string]) : [head, undefined];
  const groups = (s: string): number[] => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const l = groups(left);
  const r = right === undefined ? [] : groups(right);
  const all = right === undefined ? l : [...l, ...Array<number>(8 - l.length - r.length).fill(0), ...r];
  const bytes = all.flatMap((g) => [g >> 8, g & 0xff]);
  if (tailV4.length === 4) bytes.splice(12, 4, ...tailV4);
  return bytes;
}

export function parseAddress(text: string): Address | undefined {
  const v4 = v4Bytes(text);
  if (v4 !== undefined) return { family: 4, bytes: v4 };
  const v6 = v6Bytes(text);
  if (v6 === undefined) return undefined;
  // netip refuses an IPv4-mapped IPv6 address where kube wants an IP.
  if (v6.slice(0, 10).every((b) => b === 0) && v6[10] === 0xff && v6[11] === 0xff) return undefined;
  return { family: 6, bytes: v6 };
}

export function parsePrefix(text: string): Prefix | undefined {
  const slash = text.indexOf('/');
  if (slash === -1) return undefined;
  const address = parseAddress(text.slice(0, slash));
  const bitsText = text.slice(slash + 1);
  if (address === undefined || !/^(0|[1-9]\d*)$/.test(bitsText)) return undefined;
  const bits = Number(bitsText);
  if (bits > address.bytes.length * 8) return undefined;
  return { address, bits };
}

export function formatAddress(address: Address): string {
  if (address.family === 4) return address.bytes.join('.');
  const groups = Array.from({ length: 8 }, (_, i) => ((address.bytes[2 * i] as number) << 8) | (address.bytes[2 * i + 1] as number));
  // The longest run of two or more zero groups becomes "::" (RFC 5952).
  let best = { start: -1, length: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i += 1;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j += 1;
    if (j - i > best.length && j - i >= 2) best = { start: i, length: j - i };
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.start === -1) return hex.join(':');
  return `${hex.slice(0, best.start).join(':')}::${hex.slice(best.start + best.length).join(':')}`;
}

export function masked(prefix: Prefix): Prefix {
  const bytes = prefix.address.bytes.map((b, i) => {
    const keep = Math.max(0, Math.min(8, prefix.bits - i * 8));
    return b & ((0xff << (8 - keep)) & 0xff);
  });
  return { address: { family: prefix.address.family, bytes }, bits: prefix.bits };
}

export function prefixContains(prefix: Prefix, address: Address): boolean {
  if (prefix.address.family !== address.family) return false;
  const network = masked(prefix).address.bytes;
  const candidate = masked({ address, bits: prefix.bits }).address.bytes;
  return network.every((b, i) => b === candidate[i]);
}

const inRange = (a: Address, network: string): boolean => prefixContains(parsePrefix(network) as Prefix, a);

export const addressTests = {
  isUnspecified: (a: Address): boolean => a.bytes.every((b) => b === 0),
  isLoopback: (a: Address): boolean => (a.family === 4 ? a.bytes[0] === 127 : inRange(a, '::1/128')),
  isLinkLocalMulticast: (a: Address): boolean => (a.family === 4 ? inRange(a, '224.0.0.0/24') : a.bytes[0] === 0xff && ((a.bytes[1] as number) & 0x0f) === 0x02),
  isLinkLocalUnicast: (a: Address): boolean => (a.family === 4 ? inRange(a, '169.254.0.0/16') : inRange(a, 'fe80::/10')),
  isGlobalUnicast: (a: Address): boolean => {
    if (addressTests.isUnspecified(a) || addressTests.isLoopback(a) || addressTests.isLinkLocalUnicast(a)) return false;
    if (a.family === 4) return !inRange(a, '224.0.0.0/4') && !a.bytes.every((b) => b === 255);
    return a.bytes[0] !== 0xff;
  },
};
