-- Rate-limit counters shared by every API process without Redis (issue 29 item 5): the
-- sign-in failure limit (10 per email per 15 minutes) counted here is one budget however
-- many processes serve the API. Written by rate-limiter-flexible's RateLimiterDrizzle
-- (src/platform/rate-limit.ts): key = "<limiter prefix>:<what is counted>".
CREATE TABLE "rate_limits" (
	"key" text PRIMARY KEY NOT NULL,
	"points" integer NOT NULL,
	"expire" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "rate_limits_expire_idx" ON "rate_limits" USING btree ("expire");
