CREATE TABLE "target_drift" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"target_id" uuid NOT NULL,
	"object_name" text NOT NULL,
	"rule_id" text,
	"deployment_id" uuid,
	"kind" text NOT NULL,
	"detail" text NOT NULL,
	"first_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL,
	"resolved_at" timestamp with time zone,
	"found_by" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "targets" ADD COLUMN "drift_checked_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "target_drift" ADD CONSTRAINT "target_drift_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "target_drift" ADD CONSTRAINT "target_drift_target_id_targets_id_fk" FOREIGN KEY ("target_id") REFERENCES "public"."targets"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "target_drift" ADD CONSTRAINT "target_drift_deployment_id_deployments_id_fk" FOREIGN KEY ("deployment_id") REFERENCES "public"."deployments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "target_drift_open" ON "target_drift" USING btree ("target_id","object_name","kind") WHERE "target_drift"."resolved_at" is null;--> statement-breakpoint
CREATE INDEX "target_drift_rule" ON "target_drift" USING btree ("tenant_id","rule_id");--> statement-breakpoint
CREATE INDEX "target_drift_deployment" ON "target_drift" USING btree ("deployment_id");