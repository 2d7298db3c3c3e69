import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { DashboardQuery, DashboardResponse, RevenueQuery, RevenueResponse } from './dashboard.schemas.js';
import { dashboard, revenueSeries } from './dashboard.service.js';

/** `/api/dashboard` (operations.md §7): SQL aggregates, readable by every role. */
export default async function dashboardRoutes(fastify: FastifyInstance) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['dashboard'];

  app.get(
    '/api/dashboard',
    {
      schema: {
        tags,
        summary: "The organization's figures: revenue, receivables, payables, jobs, estimates, contracts, crew, winter",
        description:
          "Every role may read it. The range from..to (calendar dates, both included) defaults to this month in the organization's timezone; from after to → 400. Revenue, jobs completed and by status, estimates, crew hours and winter figures are for the range; receivables, payables, jobs scheduled today and in progress, and contracts are as of now. Every figure is an SQL aggregate; money as decimals.",
        querystring: DashboardQuery,
        response: { 200: DashboardResponse },
      },
    },
    async (request) => ({ data: await inRequestTenant(database.db, request, (ctx) => dashboard(ctx, request.query)) }),
  );

  app.get(
    '/api/dashboard/revenue',
    {
      schema: {
        tags,
        summary: 'Invoiced and collected per day, week or month, every period in range (empty ones as 0)',
        description:
          'Every role may read it. interval day | week (weeks start on Monday) | month (default); from..to defaults to the last 12 months (from the 1st of the month 11 months ago to today, organization timezone). `period` is the first day of each period; a range of more than 1000 periods or from after to → 400.',
        querystring: RevenueQuery,
        response: { 200: RevenueResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => revenueSeries(ctx, request.query)),
    }),
  );
}
