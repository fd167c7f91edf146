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
ALTER TABLE "rule_health_states" ADD CONSTRAINT "rule_health_states_deployment_id_deployments_id_fk" FOREIGN KEY ("deployment_id") REFERENCES "public"."deployments"("id") ON DELETE cascade ON UPDATE no action;