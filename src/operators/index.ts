export * from './deltas.js';
export * from './resync.js';
export * from './rateLimiters.js';
export * from './reconcileByKey.js';
export * from './predicates.js';
export * from './owners.js';
