export * from './deltas.js';
export * from './resync.js';
