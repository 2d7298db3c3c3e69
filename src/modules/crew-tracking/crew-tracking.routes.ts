import type { FastifyInstance } from 'fastify';
import { type CrewFlows, crewRoutes } from './crews.routes.js';
import { deviceRoutes } from './devices.routes.js';
import { locationRoutes } from './locations.routes.js';
import { timeRoutes } from './time.routes.js';

/** `/api/crew-tracking` (operations.md §4): crews, clock, time entries, timesheets, locations, devices. */
export default async function crewTrackingRoutes(app: FastifyInstance, { flows }: { flows: CrewFlows }) {
  await crewRoutes(app, flows);
  await timeRoutes(app);
  await locationRoutes(app);
  await deviceRoutes(app);
}
