import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { inRequestTenant } from '../../platform/access.js';
import { pageOf, sendPage } from '../../platform/pagination.js';
import { EmptyBody, IdParams, NoContent } from '../../platform/schemas.js';
import type { Ctx } from '../../platform/tenancy.js';
import {
  BillList,
  BillListQuery,
  BillResponse,
  CreateBillBody,
  type CreateBillInput,
  UpdateBillBody,
} from './bills.schemas.js';
import { approveBill, type BillView, getBill, listBills, postBill, updateBill, voidBill } from './bills.service.js';

/**
 * The flows (src/flows/) these routes start: a bill may name a purchase order, checked when
 * the bill is made and let go when a draft is deleted. src/modules/index.ts hands them in, so
 * bills never import purchase orders or the layer above.
 */
export interface BillFlows {
  createBill(ctx: Ctx, input: CreateBillInput): Promise<BillView>;
  deleteBill(ctx: Ctx, id: string): Promise<void>;
}

/** Payables are the books: owner/admin only (operations.md §3). */
const roles = ['owner', 'admin'] as const;

export default async function billRoutes(fastify: FastifyInstance, { flows }: { flows: BillFlows }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const { database } = app.deps;
  const tags = ['bills'];

  app.get(
    '/api/bills',
    {
      config: { roles },
      schema: {
        tags,
        summary: 'List vendor bills, newest first (filters: status, vendorId, purchaseOrderId)',
        description: 'Owner/admin only; paginated like every list. Each bill carries total, amountPaid and balance.',
        querystring: BillListQuery,
        response: { 200: BillList },
      },
    },
    async (request, reply) => {
      const page = pageOf(request.query);
      const result = await inRequestTenant(database.db, request, (ctx) => listBills(ctx, request.query, page));
      return sendPage(request, reply, page, result);
    },
  );

  app.get(
    '/api/bills/:id',
    {
      config: { roles },
      schema: {
        tags,
        summary: 'One bill',
        description: 'Owner/admin only. The bill with its line items, total, amountPaid and balance.',
        params: IdParams,
        response: { 200: BillResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => getBill(ctx, request.params.id)),
    }),
  );

  app.post(
    '/api/bills',
    {
      config: { roles },
      schema: {
        tags,
        summary:
          'Record a vendor bill: posted at once (open, or awaiting_approval above the threshold) unless draft (emits bill.created)',
        description:
          'Owner/admin only. With draft: true the bill stays a draft; otherwise it is posted at once, to open (booked to Accounts Payable) or to awaiting_approval when its total exceeds the billApprovalThreshold setting. dueDate defaults to billDate plus the vendor payment terms; an inactive vendor → 400.',
        body: CreateBillBody,
        response: { 201: BillResponse },
      },
    },
    async (request, reply) => {
      const data = await inRequestTenant(database.db, request, (ctx) => flows.createBill(ctx, request.body));
      return reply.code(201).send({ data });
    },
  );

  app.patch(
    '/api/bills/:id',
    {
      config: { roles },
      schema: {
        tags,
        summary: 'Change a bill: anything while draft or awaiting approval, then only dueDate and notes',
        description:
          'Owner/admin only. Every field can change while the bill is draft or awaiting_approval; after that any field other than dueDate and notes → 409 INVALID_STATE.',
        params: IdParams,
        body: UpdateBillBody,
        response: { 200: BillResponse },
      },
    },
    async (request) => ({
      data: await inRequestTenant(database.db, request, (ctx) => updateBill(ctx, request.params.id, request.body)),
    }),
  );

  app.delete(
    '/api/bills/:id',
    {
      config: { roles },
      schema: {
        tags,
        summary: 'Delete a draft bill (409 otherwise)',
        description:
          'Owner/admin only. Only a draft bill can be deleted; any other status → 409 INVALID_STATE (an open bill with nothing paid can be voided instead).',
        params: IdParams,
        response: { 204: NoContent },
      },
    },
    async (request, reply) => {
      await inRequestTenant(database.db, request, (ctx) => flows.deleteBill(ctx, request.params.id));
      return reply.code(204).send(null);
    },
  );

  const action = (path: string, summary: string, description: string, run: typeof postBill) =>
    app.post(
      `/api/bills/:id/${path}`,
      {
        config: { roles },
        schema: { tags, summary, description, params: IdParams, body: EmptyBody, response: { 200: BillResponse } },
      },
      async (request) => ({
        data: await inRequestTenant(database.db, request, (ctx) => run(ctx, request.params.id)),
      }),
    );

  action(
    'post',
    'Post a draft: open (booked to Accounts Payable), or awaiting_approval above the threshold',
    'Owner/admin only. The bill goes to awaiting_approval when its total exceeds the billApprovalThreshold setting, else to open with its ledger entry (Dr expense lines, Cr 2000); a bill that is not a draft → 409 INVALID_STATE.',
    postBill,
  );
  action(
    'approve',
    'Approve a bill awaiting approval → open, booked (emits bill.approved)',
    'Owner/admin only. The bill is booked to Accounts Payable and can then be paid; a bill that is not awaiting approval → 409 INVALID_STATE.',
    approveBill,
  );
  action(
    'void',
    'Void an open bill with nothing paid; its ledger entry is reversed (emits bill.voided)',
    'Owner/admin only. A bill with payments, or in any status other than open → 409 INVALID_STATE.',
    voidBill,
  );
}
