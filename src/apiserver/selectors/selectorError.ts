/**
 * A label or field selector that cannot be parsed or names something the resource does not
 * support. The API server answers it with 400 BadRequest and this message.
 *
 * `reason` is kube's wording alone (clients and people match on it); `message` adds where in the
 * selector the problem starts, so a long selector's bad part is easy to find.
 */
export class SelectorError extends Error {
  override readonly name = 'SelectorError';

  constructor(
    /** Kube's own wording of the problem, e.g. `unable to parse requirement: found '(', expected: identifier`. */
    readonly reason: string,
    /** The selector as given. */
    readonly selector: string,
    /** Offset (0-based, in UTF-16 code units) of the bad part in `selector`, when there is one. */
    readonly position?: number,
  ) {
    super(position === undefined ? reason : `${reason} (at position ${position} of ${JSON.stringify(selector)})`);
  }
}
