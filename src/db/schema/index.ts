export * from './auth.js';
export * from './billing.js';
export * from './contracts.js';
export * from './customers.js';
export * from './events.js';
export * from './jobs.js';
export * from './organizations.js';
export * from './portal.js';
