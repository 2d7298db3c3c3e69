export * from './auth.js';
export * from './customers.js';
export * from './events.js';
export * from './organizations.js';
export * from './portal.js';
export * from './webhooks.js';
