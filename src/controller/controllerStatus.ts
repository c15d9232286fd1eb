/**
 * What a controller says of itself across its runs, for `synced()`,
 * `leading()`, `ready()` and `notReady()`: whether a run is under way, how
 * the last one ended (readiness tells the truth after the end too), and
 * what the elector said last (read, never used to steer the run).
 */
export class ControllerStatus {
  running = false;
  ended: string | undefined = undefined;
  leader: { leading: boolean } | undefined;
  /** What the timeline was last told of leading, in this run. */
  private toldLeading: boolean | undefined = undefined;

  /** `electing`: under leader election, nothing is known of leading until the elector says. */
  constructor(electing: boolean) {
    this.leader = electing ? undefined : { leading: true };
  }

  start(): void {
    this.running = true;
    this.ended = undefined;
    this.toldLeading = undefined;
  }

  /** What the elector said; `tell` hears changes of leading only (the elector also emits when the lease's holder changes while this replica stands by). */
  elected(state: { leading: boolean }, tell: (leading: boolean) => void): void {
    this.leader = state;
    if (state.leading !== this.toldLeading) {
      this.toldLeading = state.leading;
      tell(state.leading);
    }
  }

  finish(why: string): void {
    this.running = false;
    this.ended = why;
  }

  get leading(): boolean {
    return this.running && this.leader?.leading === true;
  }

  /** Why the controller is not ready, one line per cause: `problems` are the parts' (informers, shards), asked only while running. */
  notReady(problems: () => string[]): string[] {
    if (!this.running) return [this.ended ?? 'the controller has not started'];
    const all = problems();
    if (this.leader === undefined) all.push('leader election has not said yet whether this replica leads');
    return all;
  }
}
