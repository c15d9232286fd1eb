export * from './fromWatchEvents.js';
