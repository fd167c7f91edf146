ALTER TABLE "deployments" ADD COLUMN "demotion" jsonb;--> statement-breakpoint
ALTER TABLE "detection_runs" ADD COLUMN "mode" text DEFAULT 'alert' NOT NULL;