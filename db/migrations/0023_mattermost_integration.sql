CREATE TABLE "mattermost_integrations" (
	"tenant_id" text PRIMARY KEY NOT NULL,
	"action_key" text NOT NULL,
	"actions_url" text NOT NULL,
	"reviewers" jsonb NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "mattermost_integrations" ADD CONSTRAINT "mattermost_integrations_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;