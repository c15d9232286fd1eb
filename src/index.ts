export * from './types.js';
export * from './logger.js';
export * from './sources/index.js';
export * from './operators/index.js';
export * from './store/index.js';
export * from './sinks/index.js';
