export * from './startApiServer.js';
export type { Faults, FaultAnswer, RequestMatch } from './faults.js';
export type { RequestLogEntry } from './http/requestLog.js';
