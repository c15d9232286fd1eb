/**
 * rxkube/apiserver: the embedded Kubernetes API server, in memory and
 * over real HTTP on loopback, so that the unmodified
 * `@kubernetes/client-node` and `kubectl` work against it.
 *
 * Where to start: `startApiServer()`; its `faults` inject what real
 * clusters do (dropped watches, compacted history, throttling, errors,
 * latency). The `rxkube apiserver` command runs one for kubectl.
 *
 * @packageDocumentation
 */

export { startApiServer, type AccessSubject, type ApiServer, type ApiServerOptions } from './startApiServer.js';
export type { Fault, Faults, RequestFaults, RequestMatch } from './faults.js';
export type { RequestLogEntry } from './http/requestLog.js';
export type { ApiError, Status } from './api/statusError.js';
export type { RequestInfo } from './faults.js';
