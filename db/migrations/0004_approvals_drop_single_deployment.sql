ALTER TABLE "approvals" DROP CONSTRAINT "approvals_deployment_id_deployments_id_fk";
--> statement-breakpoint
ALTER TABLE "approvals" DROP COLUMN "deployment_id";