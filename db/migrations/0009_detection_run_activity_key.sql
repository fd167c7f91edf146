ALTER TABLE "detection_runs" ADD COLUMN "activity_key" text;--> statement-breakpoint
ALTER TABLE "detection_runs" ADD COLUMN "outcome" jsonb;--> statement-breakpoint
CREATE UNIQUE INDEX "detection_runs_activity_key" ON "detection_runs" USING btree ("activity_key");