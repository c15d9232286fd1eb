export * from './errors.js';
export * from './conditions.js';
export * from './ownerReferences.js';
