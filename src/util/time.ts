/**
 * The two wire formats of time in Kubernetes objects, each written by one
 * function. Both take the time as ms since the epoch (a scheduler's `now()`,
 * so that virtual time gives reproducible objects) or as a `Date`.
 */

function toMs(time: number | Date): number {
  const ms = time instanceof Date ? time.getTime() : time;
  if (typeof ms !== 'number' || !Number.isFinite(ms)) {
    throw new TypeError(`expected a valid Date or a finite number of ms since the epoch, got ${String(time)}`);
  }
  return ms;
}

/** `metav1.Time`: RFC 3339 in UTC with whole seconds (`2006-01-02T15:04:05Z`), as kube writes timestamps and conditions. */
export function kubeTime(time: number | Date): string {
  return `${new Date(toMs(time)).toISOString().slice(0, 19)}Z`;
}

/**
 * `metav1.MicroTime`: RFC 3339 in UTC with exactly six fractional digits
 * (`2006-01-02T15:04:05.000000Z`), as Events and Leases carry it. The API
 * server parses MicroTime with six digits and refuses the three that
 * `Date.prototype.toISOString` writes. Sub-millisecond fractions of `time`
 * are kept.
 */
export function kubeMicroTime(time: number | Date): string {
  const ms = toMs(time);
  const whole = Math.floor(ms);
  const micros = Math.floor((ms - whole) * 1000);
  return `${new Date(whole).toISOString().slice(0, -1)}${String(micros).padStart(3, '0')}Z`;
}
