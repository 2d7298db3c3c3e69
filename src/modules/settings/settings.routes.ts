import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { SecretBox } from '../../platform/secrets.js';

import { SettingsResponse, UpdateSettingsBody } from './settings.schemas.js';
import { getOrgSettings, settingsView, updateOrgSettings } from './settings.service.js';

export default async function settingsRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database, config } = app.deps;
  const box = new SecretBox(config.authSecret);
  const tags = ['settings'];

  app.get(
    '/api/settings',
    {
      schema: {
        tags,
        summary: "The organization's settings and plan",
        description: 'Timezone, currency, tax defaults, numbering and the current plan.',
        response: { 200: SettingsResponse },
      },
    },
    async (request) => {
      const settings = await inRequestTenant(database.db, request, getOrgSettings);
      return { data: settingsView(settings) };
    },
  );

  app.patch(
    '/api/settings',
    {
      config: { roles: ['owner', 'admin'] },
      schema: {
        tags,
        summary: 'Change some settings (owner/admin); plan is read-only',
        description: 'Fields not sent keep their value.',
        body: UpdateSettingsBody,
        response: { 200: SettingsResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) => updateOrgSettings(ctx, request.body, box)),
      };
    },
  );
}
