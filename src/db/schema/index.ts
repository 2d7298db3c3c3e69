export * from './auth.js';
export * from './events.js';
export * from './organizations.js';
