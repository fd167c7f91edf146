CREATE TABLE "replays" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"rule_id" text NOT NULL,
	"version" integer,
	"rule_content" text NOT NULL,
	"target_id" uuid NOT NULL,
	"window_from" timestamp with time zone NOT NULL,
	"window_to" timestamp with time zone NOT NULL,
	"noise_budget" jsonb,
	"chunk_events" integer NOT NULL,
	"status" text NOT NULL,
	"result" jsonb,
	"error" text,
	"workflow_id" text NOT NULL,
	"run_id" text,
	"requested_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "shadow_runs" (
	"id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"rule_id" text NOT NULL,
	"version" integer,
	"rule_content" text NOT NULL,
	"target_id" uuid NOT NULL,
	"duration" text NOT NULL,
	"interval" text NOT NULL,
	"status" text NOT NULL,
	"result" jsonb,
	"error" text,
	"workflow_id" text NOT NULL,
	"run_id" text,
	"requested_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "replays" ADD CONSTRAINT "replays_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "shadow_runs" ADD CONSTRAINT "shadow_runs_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "replays_tenant_status" ON "replays" USING btree ("tenant_id","status");--> statement-breakpoint
CREATE INDEX "shadow_runs_tenant_status" ON "shadow_runs" USING btree ("tenant_id","status");