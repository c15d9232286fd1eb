export * from './controller.js';
