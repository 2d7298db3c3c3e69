import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { SecretBox } from '../../platform/secrets.js';

import type { Ctx } from '../../platform/tenancy.js';
import { SettingsResponse, UpdateSettingsBody, type UpdateSettingsInput } from './settings.schemas.js';
import { getOrgSettings, settingsView, type updateOrgSettings } from './settings.service.js';

/**
 * The flows (src/flows/) these routes start. src/modules/index.ts hands them in, so this
 * module never imports the layer above it.
 */
export interface SettingsFlows {
  /** src/flows/update-settings.ts: the change, and customers' phones read again when `country` changed. */
  updateSettings(ctx: Ctx, input: UpdateSettingsInput, box: SecretBox): ReturnType<typeof updateOrgSettings>;
}

export default async function settingsRoutes(fastify: FastifyInstance, { flows }: { flows: SettingsFlows }) {
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
        description:
          'Fields not sent keep their value. Changing `country` reads every customer’s phone again with the new country (phoneE164), in the background within seconds.',
        body: UpdateSettingsBody,
        response: { 200: SettingsResponse },
      },
    },
    async (request) => {
      return {
        data: await inRequestTenant(database.db, request, (ctx) => flows.updateSettings(ctx, request.body, box)),
      };
    },
  );
}
