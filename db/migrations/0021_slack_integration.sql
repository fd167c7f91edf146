CREATE TABLE "slack_callbacks_seen" (
	"tenant_id" text NOT NULL,
	"signature" text NOT NULL,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "slack_callbacks_seen_tenant_id_signature_pk" PRIMARY KEY("tenant_id","signature")
);
--> statement-breakpoint
CREATE TABLE "slack_integrations" (
	"tenant_id" text PRIMARY KEY NOT NULL,
	"signing_secret" text NOT NULL,
	"reviewers" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "slack_callbacks_seen" ADD CONSTRAINT "slack_callbacks_seen_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "slack_integrations" ADD CONSTRAINT "slack_integrations_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "slack_callbacks_seen_at" ON "slack_callbacks_seen" USING btree ("received_at");