import { Registry } from 'prom-client';
import { gaugeOn } from './metricRegistry.js';

/** client-go's `leader_election_master_status` gauge, on a prom-client Registry. */
export interface LeaderMetrics {
  /** The Registry the gauge is on. */
  readonly registry: Registry;
  /** Sets `leader_election_master_status{name}` to 1 while leading the lease `name`, 0 while standing by. */
  setLeader(name: string, leading: boolean): void;
  /** Removes the series of that lease (the elector stopped). */
  remove(name: string): void;
}

/**
 * client-go's leader election gauge, as controller-runtime registers it:
 * `leader_election_master_status{name}`, 1 for the replica that holds the
 * lease, 0 for the ones standing by (dashboards group by `name`, the lease).
 * The registry is the caller's (default: a new one, never the global).
 */
export function leaderMetrics(registry: Registry = new Registry()): LeaderMetrics {
  const gauge = gaugeOn(
    registry,
    'leader_election_master_status',
    "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
    ['name'],
  );
  return {
    registry,
    setLeader: (name, leading) => gauge.set({ name }, leading ? 1 : 0),
    remove: (name) => gauge.remove({ name }),
  };
}
