CREATE TABLE "alert_backlog" (
	"tenant_id" text NOT NULL,
	"target_id" uuid NOT NULL,
	"team" text,
	"assignee" text,
	"open" integer NOT NULL,
	"acknowledged" integer NOT NULL,
	CONSTRAINT "alert_backlog_key" UNIQUE NULLS NOT DISTINCT("tenant_id","target_id","team","assignee")
);
--> statement-breakpoint
CREATE TABLE "alert_closed_rollup" (
	"tenant_id" text NOT NULL,
	"span_days" smallint NOT NULL,
	"day" date NOT NULL,
	"target_id" uuid NOT NULL,
	"team" text,
	"assignee" text,
	"level" text,
	"alerts" integer NOT NULL,
	"resolution_ms" bigint NOT NULL,
	CONSTRAINT "alert_closed_rollup_key" UNIQUE NULLS NOT DISTINCT("tenant_id","span_days","day","target_id","team","assignee","level")
);
--> statement-breakpoint
CREATE TABLE "alert_raised_rollup" (
	"tenant_id" text NOT NULL,
	"span_days" smallint NOT NULL,
	"day" date NOT NULL,
	"target_id" uuid NOT NULL,
	"rule_id" text NOT NULL,
	"alerts" integer NOT NULL,
	"triaged" integer NOT NULL,
	"true_positive" integer NOT NULL,
	"false_positive" integer NOT NULL,
	"benign" integer NOT NULL,
	"duplicate" integer NOT NULL,
	CONSTRAINT "alert_raised_rollup_key" UNIQUE("tenant_id","span_days","day","target_id","rule_id")
);
--> statement-breakpoint
DROP INDEX "detection_runs_tenant_started";--> statement-breakpoint
ALTER TABLE "alert_backlog" ADD CONSTRAINT "alert_backlog_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_closed_rollup" ADD CONSTRAINT "alert_closed_rollup_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_raised_rollup" ADD CONSTRAINT "alert_raised_rollup_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "alert_closed_rollup_figures" ON "alert_closed_rollup" USING btree ("tenant_id","span_days","day","target_id","team","assignee","level","alerts","resolution_ms");--> statement-breakpoint
CREATE INDEX "alert_raised_rollup_figures" ON "alert_raised_rollup" USING btree ("tenant_id","span_days","day","target_id","rule_id","alerts","triaged","true_positive","false_positive","benign","duplicate");--> statement-breakpoint
CREATE INDEX "alerts_tenant_closed" ON "alerts" USING btree ("tenant_id","closed_at");--> statement-breakpoint
CREATE INDEX "detection_runs_tenant_started_volumes" ON "detection_runs" USING btree ("tenant_id","started_at","deployment_id","mode","alerts_raised","alerts_suppressed","matches");--> statement-breakpoint
CREATE INDEX "detection_runs_deployment_volumes" ON "detection_runs" USING btree ("deployment_id","tenant_id","mode","alerts_raised","alerts_suppressed","matches");