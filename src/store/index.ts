export * from './indexFunctions.js';
export * from './store.js';
export * from './indexer.js';
