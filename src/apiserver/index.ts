export * from './startApiServer.js';
export type { Fault, Faults, RequestFaults, RequestMatch } from './faults.js';
export type { RequestLogEntry } from './http/requestLog.js';
