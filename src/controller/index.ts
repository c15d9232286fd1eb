export * from './controller.js';
export * from './runController.js';
