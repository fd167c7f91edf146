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
CREATE TABLE "alert_closed_daily" (
	"tenant_id" text NOT NULL,
	"day" date NOT NULL,
	"target_id" uuid NOT NULL,
	"team" text,
	"assignee" text,
	"level" text,
	"alerts" integer NOT NULL,
	"resolution_ms" bigint NOT NULL,
	CONSTRAINT "alert_closed_daily_key" UNIQUE NULLS NOT DISTINCT("tenant_id","day","target_id","team","assignee","level")
);
--> statement-breakpoint
CREATE TABLE "alert_raised_daily" (
	"tenant_id" text NOT NULL,
	"day" date NOT NULL,
	"target_id" uuid NOT NULL,
	"rule_id" text NOT NULL,
	"alerts" integer NOT NULL,
	"triaged" integer NOT NULL,
	"true_positive" integer NOT NULL,
	"false_positive" integer NOT NULL,
	"benign" integer NOT NULL,
	"duplicate" integer NOT NULL,
	CONSTRAINT "alert_raised_daily_key" UNIQUE("tenant_id","day","target_id","rule_id")
);
--> statement-breakpoint
ALTER TABLE "alert_backlog" ADD CONSTRAINT "alert_backlog_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_closed_daily" ADD CONSTRAINT "alert_closed_daily_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "alert_raised_daily" ADD CONSTRAINT "alert_raised_daily_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "alerts_tenant_closed" ON "alerts" USING btree ("tenant_id","closed_at");