export * from './apiserver/startApiServer.js';
export type { Faults, FaultAnswer, RequestMatch } from './apiserver/faults.js';
export type { RequestLogEntry } from './apiserver/requestLog.js';
export type { ResourceRef } from './apiserver/resourceType.js';
export * from './leaseClient.js';
export * from './pausable.js';
export * from './marble/index.js';
