DROP INDEX "deployments_workflow";--> statement-breakpoint
CREATE UNIQUE INDEX "deployments_workflow_target" ON "deployments" USING btree ("workflow_id","target_id");