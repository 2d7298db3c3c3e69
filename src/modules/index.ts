import type { FastifyInstance } from 'fastify';
import { anonymizeCustomer } from '../flows/anonymize-customer.js';
import { batchInvoices, invoicesFromJobs } from '../flows/bill-jobs.js';
import { billPurchaseOrder } from '../flows/bill-purchase-order.js';
import { billStorm } from '../flows/bill-storm.js';
import { convertEstimate } from '../flows/convert-estimate.js';
import { convertEstimateToJob } from '../flows/convert-estimate-to-job.js';
import { convertRequest } from '../flows/convert-request.js';
import { createBill } from '../flows/create-bill.js';
import { deleteBill } from '../flows/delete-bill.js';
import {
  deleteContractTemplate,
  deleteCrew,
  deleteCustomer,
  deleteInvoice,
  deleteJob,
  deleteMember,
  deleteProperty,
  deleteService,
} from '../flows/delete-referenced.js';
import { passwordResetMail } from '../flows/mail-password-reset.js';
import { recordPayment } from '../flows/record-payment.js';
import { refundPayment } from '../flows/refund-payment.js';
import { repriceService } from '../flows/reprice-service.js';
import { sendEstimateOn, sendInvoiceOn } from '../flows/send-document.js';
import { updateJobAndBillVisit } from '../flows/update-job.js';
import { updateSettings } from '../flows/update-settings.js';
import apiKeyRoutes from './api-keys/api-keys.routes.js';
import authRoutes from './auth/auth.routes.js';
import billPaymentRoutes from './bill-payments/bill-payments.routes.js';
import billRoutes from './bills/bills.routes.js';
import contractTemplateRoutes from './contract-templates/contract-templates.routes.js';
import contractRoutes from './contracts/contracts.routes.js';
import crewTrackingRoutes from './crew-tracking/crew-tracking.routes.js';
import customerRoutes from './customers/customers.routes.js';
import dashboardRoutes from './dashboard/dashboard.routes.js';
import equipmentRoutes from './equipment/equipment.routes.js';
import estimateRoutes from './estimates/estimates.routes.js';
import exportRoutes from './exports/exports.routes.js';
import invitationRoutes from './invitations/invitations.routes.js';
import invoiceRoutes from './invoices/invoices.routes.js';
import jobRoutes from './jobs/jobs.routes.js';
import ledgerRoutes from './ledger/ledger.routes.js';
import memberRoutes from './members/members.routes.js';
import messageRoutes from './messages/messages.routes.js';
import organizationRoutes from './organizations/organizations.routes.js';
import paymentRoutes from './payments/payments.routes.js';
import portalRoutes from './portal/portal.routes.js';
import { portalHandlers } from './portal.handlers.js';
import propertyRoutes from './properties/properties.routes.js';
import purchaseOrderRoutes from './purchase-orders/purchase-orders.routes.js';
import quickbooksRoutes from './quickbooks/quickbooks.routes.js';
import requestRoutes from './requests/requests.routes.js';
import serviceRoutes from './services/services.routes.js';
import settingsRoutes from './settings/settings.routes.js';
import vendorRoutes from './vendors/vendors.routes.js';
import webhookRoutes from './webhooks/webhooks.routes.js';
import winterRoutes from './winter-routes/winter-routes.routes.js';
import workflowRoutes from './workflows/workflows.routes.js';

/**
 * Every route module, registered in this order by buildApp. One line per module. A module
 * whose routes start flows (src/flows/) gets them here: the flows stand above the modules
 * whose functions they call, so the modules never import them.
 */
export const modules: Array<(app: FastifyInstance) => Promise<void>> = [
  authRoutes,
  organizationRoutes,
  (app) => memberRoutes(app, { flows: { deleteMember } }),
  invitationRoutes,
  apiKeyRoutes,
  (app) => portalRoutes(app, { handlers: portalHandlers }),
  (app) => settingsRoutes(app, { flows: { updateSettings } }),
  (app) => customerRoutes(app, { flows: { anonymizeCustomer, deleteCustomer } }),
  (app) => propertyRoutes(app, { flows: { deleteProperty } }),
  (app) => serviceRoutes(app, { flows: { deleteService, repriceService } }),
  (app) =>
    invoiceRoutes(app, {
      flows: { recordPayment, invoicesFromJobs, batchInvoices, deleteInvoice, sendInvoice: sendInvoiceOn },
    }),
  (app) => paymentRoutes(app, { flows: { refundPayment } }),
  (app) => estimateRoutes(app, { flows: { convertEstimate, convertEstimateToJob, sendEstimate: sendEstimateOn } }),
  (app) => jobRoutes(app, { flows: { updateJobAndBillVisit, deleteJob } }),
  (app) => contractTemplateRoutes(app, { flows: { deleteContractTemplate } }),
  contractRoutes,
  (app) => crewTrackingRoutes(app, { flows: { deleteCrew } }),
  equipmentRoutes,
  webhookRoutes,
  vendorRoutes,
  (app) => purchaseOrderRoutes(app, { flows: { billPurchaseOrder } }),
  (app) => billRoutes(app, { flows: { createBill, deleteBill } }),
  billPaymentRoutes,
  ledgerRoutes,
  quickbooksRoutes,
  (app) => winterRoutes(app, { flows: { billStorm } }),
  workflowRoutes,
  dashboardRoutes,
  exportRoutes,
  messageRoutes,
  (app) => requestRoutes(app, { flows: { convertRequest } }),
];

/**
 * The mails Better Auth sends (a password reset), handed to it by buildApp: they are written
 * with the mail and settings modules, which the platform's auth may not import.
 */
export const accountMail = passwordResetMail;
