export * from './errors.js';
export * from './conditions.js';
export * from './ownerReferences.js';
export * from './workqueueMetrics.js';
export * from './metrics.js';
export * from './leaderMetrics.js';
export * from './sourceMetrics.js';
export * from './healthServer.js';
