import type { FastifyInstance } from 'fastify';
import apiKeyRoutes from './api-keys/api-keys.routes.js';
import authRoutes from './auth/auth.routes.js';
import invitationRoutes from './invitations/invitations.routes.js';
import memberRoutes from './members/members.routes.js';
import organizationRoutes from './organizations/organizations.routes.js';
import portalRoutes from './portal/portal.routes.js';
import webhookRoutes from './webhooks/webhooks.routes.js';

/** Every route module, registered in this order by buildApp. One line per module. */
export const modules: Array<(app: FastifyInstance) => Promise<void>> = [
  authRoutes,
  organizationRoutes,
  memberRoutes,
  invitationRoutes,
  apiKeyRoutes,
  portalRoutes,
  webhookRoutes,
];
