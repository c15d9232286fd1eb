export * from './types.js';
export * from './logger.js';
export * from './sources/index.js';
export * from './operators/index.js';
export * from './store/index.js';
export * from './sinks/index.js';
export * from './controller/index.js';
// Both the source and its metrics name why a watch restarted; the source's is the precise one.
export type { WatchRestartReason } from './sources/index.js';
