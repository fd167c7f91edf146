CREATE TABLE "health_settings" (
	"tenant_id" text PRIMARY KEY NOT NULL,
	"thresholds" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "rule_health_states" (
	"deployment_id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"error_rate" text,
	"data_quality" text,
	"crossing_key" text,
	"crossing" jsonb,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "health_settings" ADD CONSTRAINT "health_settings_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "rule_health_states" ADD CONSTRAINT "rule_health_states_deployment_id_deployments_id_fk" FOREIGN KEY ("deployment_id") REFERENCES "public"."deployments"("id") ON DELETE cascade ON UPDATE no action;