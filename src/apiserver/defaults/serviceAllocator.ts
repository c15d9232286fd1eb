import { isPlainObject } from '../../util/json.js';
import type { KubeObject } from '../../types.js';
import type { Plain } from './fields.js';
import { ApiError, invalid, type FieldError } from '../api/statusError.js';

/**
 * The cluster IPs and node ports of Services, allocated as kube-apiserver 1.32's service
 * registry does (pkg/registry/core/service/storage/alloc.go, ipallocator, portallocator), on one
 * server's state: a single-stack IPv4 service CIDR (kube's default `10.0.0.0/24`, network and
 * broadcast addresses excluded) and the node port range 30000-32767. Dynamic picks start in the
 * upper band of each range, as kube's do (the lower band is kept for static requests); kube picks
 * at random there, this server the first free one. A requested IP or port that is taken or out of
 * range is refused in kube's words. What is in use is read back from the stored Services
 * (`observe`), so a Service's IP and ports are free again once it is deleted.
 */

export interface ServiceAllocatorOptions {
  /** The IPv4 service CIDR (default `10.0.0.0/24`, kube-apiserver's `--service-cluster-ip-range` default). */
  serviceCidr?: string;
}

const nodePortMin = 30000;
const nodePortMax = 32767;

function parseIPv4(text: string): number | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0;
  for (const part of parts) {
    if (!/^\d{1,3}$/.test(part) || Number(part) > 255) return undefined;
    value = value * 256 + Number(part);
  }
  return value;
}

function formatIPv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join('.');
}

/** First and last allocatable address of an IPv4 CIDR, as kube's ipallocator computes the range. */
export function parseServiceCidr(cidr: string): { cidr: string; first: number; last: number } {
  const match = /^([^/]+)\/(\d{1,2})$/.exec(cidr);
  const base = match === null ? undefined : parseIPv4(match[1] as string);
  const prefix = match === null ? NaN : Number(match[2]);
  if (base === undefined || !(prefix >= 8 && prefix <= 30)) {
    throw new Error(`invalid service CIDR ${JSON.stringify(cidr)}: expected an IPv4 CIDR with a prefix from /8 to /30, such as 10.0.0.0/24`);
  }
  const size = 2 ** (32 - prefix);
  const network = base - (base % size);
  return { cidr: `${formatIPv4(network)}/${prefix}`, first: network + 1, last: network + size - 2 };
}

/** kube's static band: the lower part of a range kept for requested values, min(max(16, size/step), cap). */
function bandStart(size: number, step: number, cap: number): number {
  return Math.min(Math.max(16, Math.floor(size / step)), cap);
}

function needsClusterIP(spec: Plain): boolean {
  return spec.type !== 'ExternalName';
}

function needsNodePorts(spec: Plain): boolean {
  return spec.type === 'NodePort' || (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);
}

function ports(spec: Plain): Plain[] {
  return Array.isArray(spec.ports) ? (spec.ports.filter(isPlainObject) as Plain[]) : [];
}

function specOf(obj: KubeObject | undefined): Plain | undefined {
  const spec = (obj as unknown as Plain | undefined)?.spec;
  return isPlainObject(spec) ? spec : undefined;
}

function ipsOf(spec: Plain | undefined): string[] {
  if (spec === undefined) return [];
  const ips = Array.isArray(spec.clusterIPs) ? spec.clusterIPs : [spec.clusterIP];
  return ips.filter((ip): ip is string => typeof ip === 'string' && ip !== '' && ip !== 'None');
}

function nodePortsOf(spec: Plain | undefined): number[] {
  if (spec === undefined) return [];
  return ports(spec)
    .map((port) => port.nodePort)
    .filter((n): n is number => typeof n === 'number' && n !== 0);
}

export class ServiceAllocator {
  readonly cidr: string;
  private readonly first: number;
  private readonly last: number;
  /** Addresses and node ports in use, with how many stored Services hold each (a count, so a bad state never frees what another holds). */
  private readonly ips = new Map<string, number>();
  private readonly nodePorts = new Map<number, number>();

  constructor(options: ServiceAllocatorOptions = {}) {
    const range = parseServiceCidr(options.serviceCidr ?? '10.0.0.0/24');
    this.cidr = range.cidr;
    this.first = range.first;
    this.last = range.last;
  }

  /** Follows the stored Services: what the previous state held is released, what the new one holds is taken. */
  observe(previous: KubeObject | undefined, current: KubeObject | undefined): void {
    for (const ip of ipsOf(specOf(previous))) count(this.ips, ip, -1);
    for (const port of nodePortsOf(specOf(previous))) count(this.nodePorts, port, -1);
    for (const ip of ipsOf(specOf(current))) count(this.ips, ip, 1);
    for (const port of nodePortsOf(specOf(current))) count(this.nodePorts, port, 1);
  }

  /**
   * Fills in a Service's cluster IPs, IP families and node ports before it is stored: on create,
   * or on update (`live`), where what the stored object holds is kept when the update leaves it
   * out, as kube's `patchAllocatedValues` does. Throws kube's 422 for a taken or out-of-range value.
   */
  allocate(obj: KubeObject, live?: KubeObject): void {
    const spec = specOf(obj);
    if (spec === undefined) return;
    const liveSpec = specOf(live);
    const name = obj.metadata.name ?? '';
    if (!needsClusterIP(spec)) {
      delete spec.clusterIP;
      delete spec.clusterIPs;
      delete spec.ipFamilies;
      delete spec.ipFamilyPolicy;
    } else {
      if (liveSpec !== undefined && needsClusterIP(liveSpec)) keepAllocatedIPs(spec, liveSpec);
      this.allocateClusterIP(spec, new Set(ipsOf(liveSpec)), name);
    }
    if (needsNodePorts(spec)) {
      if (liveSpec !== undefined && needsNodePorts(liveSpec)) keepAllocatedNodePorts(spec, liveSpec);
      this.allocateNodePorts(spec, new Set(nodePortsOf(liveSpec)), name);
    }
  }

  private allocateClusterIP(spec: Plain, own: ReadonlySet<string>, name: string): void {
    const requested = typeof spec.clusterIP === 'string' && spec.clusterIP !== '' ? spec.clusterIP : Array.isArray(spec.clusterIPs) && typeof spec.clusterIPs[0] === 'string' ? spec.clusterIPs[0] : '';
    if (spec.ipFamilyPolicy === undefined || spec.ipFamilyPolicy === null) spec.ipFamilyPolicy = 'SingleStack';
    if (!Array.isArray(spec.ipFamilies) || spec.ipFamilies.length === 0) spec.ipFamilies = ['IPv4'];
    if (requested === 'None') {
      spec.clusterIP = 'None';
      spec.clusterIPs = ['None'];
      return;
    }
    let ip = requested;
    if (ip === '') ip = this.nextIP(name);
    else if (!own.has(ip)) this.checkIP(ip, spec, name);
    spec.clusterIP = ip;
    spec.clusterIPs = [ip];
  }

  private checkIP(ip: string, spec: Plain, name: string): void {
    const value = parseIPv4(ip);
    const shown = Array.isArray(spec.clusterIPs) ? spec.clusterIPs : [ip];
    const refuse = (why: string): never => {
      throw invalid({ group: '', kind: 'Service' }, name, [{ field: 'spec.clusterIPs', type: 'Invalid value', value: shown, detail: `failed to allocate IP ${ip}: ${why}` }]);
    };
    if (value === undefined || value < this.first || value > this.last) {
      refuse(`the provided IP (${ip}) is not in the valid range. The range of valid IPs is ${this.cidr}`);
    }
    if (this.ips.has(ip)) refuse('provided IP is already allocated');
  }

  private nextIP(name: string): string {
    const size = this.last - this.first + 1;
    const offset = size > 32 ? bandStart(size, 16, 256) : 0;
    for (let i = 0; i < size; i++) {
      const ip = formatIPv4(this.first + ((offset + i) % size));
      if (!this.ips.has(ip)) return ip;
    }
    throw new ApiError(500, 'InternalError', `Internal error occurred: failed to allocate a serviceIP: range is full`, { name, kind: 'services' });
  }

  private allocateNodePorts(spec: Plain, own: ReadonlySet<number>, name: string): void {
    const errors: FieldError[] = [];
    const used = new Set<number>();
    ports(spec).forEach((port, i) => {
      const requested = port.nodePort;
      if (typeof requested !== 'number' || requested === 0) return;
      const field = `spec.ports[${i}].nodePort`;
      if (requested < nodePortMin || requested > nodePortMax) {
        errors.push({ field, type: 'Invalid value', value: requested, detail: `provided port is not in the valid range. The range of valid ports is ${nodePortMin}-${nodePortMax}` });
      } else if (!own.has(requested) && this.nodePorts.has(requested)) {
        errors.push({ field, type: 'Invalid value', value: requested, detail: 'provided port is already allocated' });
      }
      used.add(requested);
    });
    if (errors.length > 0) throw invalid({ group: '', kind: 'Service' }, name, errors);
    for (const port of ports(spec)) {
      if (typeof port.nodePort === 'number' && port.nodePort !== 0) continue;
      const picked = this.nextNodePort(used, own, name);
      used.add(picked);
      port.nodePort = picked;
    }
  }

  private nextNodePort(used: ReadonlySet<number>, own: ReadonlySet<number>, name: string): number {
    const size = nodePortMax - nodePortMin + 1;
    const offset = bandStart(size, 32, 128);
    for (let i = 0; i < size; i++) {
      const port = nodePortMin + ((offset + i) % size);
      if (!used.has(port) && !own.has(port) && !this.nodePorts.has(port)) return port;
    }
    throw new ApiError(500, 'InternalError', 'Internal error occurred: failed to allocate a nodePort: range is full', { name, kind: 'services' });
  }
}

function count<K>(map: Map<K, number>, key: K, delta: number): void {
  const next = (map.get(key) ?? 0) + delta;
  if (next > 0) map.set(key, next);
  else map.delete(key);
}

/** An update that leaves out the cluster IP keeps the stored one. */
function keepAllocatedIPs(spec: Plain, liveSpec: Plain): void {
  if ((spec.clusterIP === undefined || spec.clusterIP === '') && (!Array.isArray(spec.clusterIPs) || spec.clusterIPs.length === 0)) {
    if (liveSpec.clusterIP !== undefined) spec.clusterIP = liveSpec.clusterIP;
    if (liveSpec.clusterIPs !== undefined) spec.clusterIPs = liveSpec.clusterIPs;
  }
  if (spec.ipFamilies === undefined && liveSpec.ipFamilies !== undefined) spec.ipFamilies = liveSpec.ipFamilies;
  if (spec.ipFamilyPolicy === undefined && liveSpec.ipFamilyPolicy !== undefined) spec.ipFamilyPolicy = liveSpec.ipFamilyPolicy;
}

/** An update that leaves out a port's node port keeps the one the stored port (same port and protocol) had. */
function keepAllocatedNodePorts(spec: Plain, liveSpec: Plain): void {
  const liveByPort = new Map<string, unknown>();
  for (const port of ports(liveSpec)) liveByPort.set(`${String(port.port)}/${String(port.protocol)}`, port.nodePort);
  for (const port of ports(spec)) {
    if (typeof port.nodePort === 'number' && port.nodePort !== 0) continue;
    const kept = liveByPort.get(`${String(port.port)}/${String(port.protocol)}`);
    if (typeof kept === 'number') port.nodePort = kept;
  }
}
