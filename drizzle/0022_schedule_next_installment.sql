-- The schedule-billing worker's pass selects only the installment schedules with an installment
-- due (src/flows/bill-schedules.ts), instead of working out every started schedule's plan on every
-- pass. NULL (every existing row) means "not worked out yet": the next pass bills from
-- billing.firstDate, as before, and sets the date.
ALTER TABLE "job_schedules" ADD COLUMN "next_installment_date" date;--> statement-breakpoint
CREATE INDEX "job_schedules_installments_due_idx" ON "job_schedules" USING btree ("next_installment_date") WHERE status = 'active' AND billing->>'mode' = 'installments';
