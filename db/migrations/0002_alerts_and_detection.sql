CREATE TABLE "alerts" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"deployment_id" uuid NOT NULL,
	"rule_id" text NOT NULL,
	"version" integer NOT NULL,
	"target_id" uuid NOT NULL,
	"event_seq" bigint NOT NULL,
	"event_id" text NOT NULL,
	"event_time" timestamp with time zone NOT NULL,
	"event" jsonb NOT NULL,
	"status" text NOT NULL,
	"disposition" text,
	"assignee" text,
	"team" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"acknowledged_at" timestamp with time zone,
	"closed_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "detection_runs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"deployment_id" uuid NOT NULL,
	"rule_id" text NOT NULL,
	"started_at" timestamp with time zone NOT NULL,
	"duration_ms" integer NOT NULL,
	"events_scanned" bigint NOT NULL,
	"matches" integer NOT NULL,
	"alerts_raised" integer NOT NULL,
	"alerts_suppressed" integer NOT NULL,
	"cursor_from" bigint NOT NULL,
	"cursor_to" bigint NOT NULL,
	"error" text
);
--> statement-breakpoint
ALTER TABLE "deployments" ADD COLUMN "detection_cursor" bigint;--> statement-breakpoint
ALTER TABLE "alerts" ADD CONSTRAINT "alerts_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alerts" ADD CONSTRAINT "alerts_deployment_id_deployments_id_fk" FOREIGN KEY ("deployment_id") REFERENCES "public"."deployments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "detection_runs" ADD CONSTRAINT "detection_runs_deployment_id_deployments_id_fk" FOREIGN KEY ("deployment_id") REFERENCES "public"."deployments"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "alerts_deployment_event" ON "alerts" USING btree ("deployment_id","event_seq");--> statement-breakpoint
CREATE INDEX "alerts_tenant_created" ON "alerts" USING btree ("tenant_id","created_at");--> statement-breakpoint
CREATE INDEX "alerts_tenant_rule" ON "alerts" USING btree ("tenant_id","rule_id");--> statement-breakpoint
CREATE INDEX "detection_runs_deployment" ON "detection_runs" USING btree ("deployment_id","started_at");--> statement-breakpoint
CREATE INDEX "detection_runs_tenant_rule" ON "detection_runs" USING btree ("tenant_id","rule_id","started_at");