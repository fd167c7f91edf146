ALTER TABLE "approvals" ADD COLUMN "deployment_ids" jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "noise_budget" jsonb;