ALTER TABLE "api_tokens" ADD COLUMN "principal" text;--> statement-breakpoint
UPDATE "api_tokens" SET "principal" = CASE WHEN "created_by" IS NULL AND "permissions" @> '["operator"]'::jsonb THEN 'bootstrap' ELSE 'token:' || "id"::text END;--> statement-breakpoint
ALTER TABLE "api_tokens" ALTER COLUMN "principal" SET NOT NULL;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "requested_by_principal" text;--> statement-breakpoint
ALTER TABLE "approvals" ADD COLUMN "decided_by_principal" text;--> statement-breakpoint
ALTER TABLE "audit_log" ADD COLUMN "principal" text;--> statement-breakpoint
ALTER TABLE "deployments" ADD COLUMN "requested_by_principal" text;--> statement-breakpoint
UPDATE "approvals" SET "requested_by_principal" = t."principal" FROM "api_tokens" t WHERE t."id" = "approvals"."requested_by";--> statement-breakpoint
UPDATE "approvals" SET "decided_by_principal" = t."principal" FROM "api_tokens" t WHERE t."id" = "approvals"."decided_by";--> statement-breakpoint
UPDATE "deployments" SET "requested_by_principal" = t."principal" FROM "api_tokens" t WHERE t."id" = "deployments"."requested_by";
