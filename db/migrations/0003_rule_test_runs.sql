CREATE TABLE "rule_test_runs" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"rule_id" text NOT NULL,
	"version" integer NOT NULL,
	"target_id" uuid NOT NULL,
	"passed" boolean NOT NULL,
	"total" integer NOT NULL,
	"failed" integer NOT NULL,
	"result" jsonb NOT NULL,
	"created_by" uuid,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "rule_test_runs" ADD CONSTRAINT "rule_test_runs_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "rule_test_runs_rule" ON "rule_test_runs" USING btree ("tenant_id","rule_id","created_at");