-- QuickBooks sync of refunds (RefundReceipt, operations.md §11): a job's entity may be `refund`.
-- Customers made inactive and an Item per service need no change here: they are `customer` jobs
-- and `item` rows of quickbooks_records.
ALTER TABLE "quickbooks_sync_jobs" DROP CONSTRAINT "quickbooks_sync_jobs_entity_check";
--> statement-breakpoint
ALTER TABLE "quickbooks_sync_jobs" ADD CONSTRAINT "quickbooks_sync_jobs_entity_check"
  CHECK ("entity" IN ('customer', 'invoice', 'payment', 'refund'));
