CREATE TABLE "detection_run_totals" (
	"deployment_id" uuid PRIMARY KEY NOT NULL,
	"tenant_id" text NOT NULL,
	"runs" integer NOT NULL,
	"failed_runs" integer NOT NULL,
	"alerts_raised" bigint NOT NULL,
	"alerts_suppressed" bigint NOT NULL,
	"shadow_matches" bigint NOT NULL
);
--> statement-breakpoint
DROP INDEX "detection_runs_deployment_volumes";--> statement-breakpoint
ALTER TABLE "detection_run_totals" ADD CONSTRAINT "detection_run_totals_deployment_id_deployments_id_fk" FOREIGN KEY ("deployment_id") REFERENCES "public"."deployments"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "detection_run_totals" ADD CONSTRAINT "detection_run_totals_tenant_id_tenants_id_fk" FOREIGN KEY ("tenant_id") REFERENCES "public"."tenants"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Keeps detection_run_totals equal to the sums of `detection_runs` per deployment, in the same
-- transaction as every change to the runs (which the application only ever inserts). Statement-level
-- triggers with transition tables: a batch of runs is one grouped upsert. Each changed run counts
-- -1 as it was and +1 as it is. Rows are upserted in key order, so two transactions writing the same
-- deployments' totals wait for each other and never deadlock on them. docs/decisions/0093.
CREATE FUNCTION detection_run_totals_apply() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  changed text;
BEGIN
  IF TG_OP = 'INSERT' THEN
    changed := 'SELECT n.*, 1 AS d FROM new_rows n';
  ELSIF TG_OP = 'DELETE' THEN
    changed := 'SELECT o.*, -1 AS d FROM old_rows o';
  ELSE
    changed := 'SELECT o.*, -1 AS d FROM old_rows o UNION ALL SELECT n.*, 1 FROM new_rows n';
  END IF;
  EXECUTE format('WITH changed AS (%s) ', changed) || $sql$
    INSERT INTO detection_run_totals AS t (deployment_id, tenant_id, runs, failed_runs, alerts_raised, alerts_suppressed, shadow_matches)
    SELECT deployment_id, min(tenant_id), sum(d), coalesce(sum(d) FILTER (WHERE error IS NOT NULL), 0), sum(d * alerts_raised), sum(d * alerts_suppressed),
      coalesce(sum(d * matches) FILTER (WHERE mode = 'shadow'), 0)
    FROM changed GROUP BY deployment_id ORDER BY deployment_id
    ON CONFLICT (deployment_id) DO UPDATE SET
      runs = t.runs + excluded.runs, failed_runs = t.failed_runs + excluded.failed_runs, alerts_raised = t.alerts_raised + excluded.alerts_raised,
      alerts_suppressed = t.alerts_suppressed + excluded.alerts_suppressed, shadow_matches = t.shadow_matches + excluded.shadow_matches
  $sql$;
  RETURN NULL;
END
$fn$;
--> statement-breakpoint
CREATE TRIGGER detection_runs_totals_insert AFTER INSERT ON detection_runs REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION detection_run_totals_apply();
--> statement-breakpoint
CREATE TRIGGER detection_runs_totals_update AFTER UPDATE ON detection_runs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION detection_run_totals_apply();
--> statement-breakpoint
CREATE TRIGGER detection_runs_totals_delete AFTER DELETE ON detection_runs REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION detection_run_totals_apply();
--> statement-breakpoint
-- The runs already recorded.
INSERT INTO detection_run_totals (deployment_id, tenant_id, runs, failed_runs, alerts_raised, alerts_suppressed, shadow_matches)
SELECT deployment_id, min(tenant_id), count(*), count(*) FILTER (WHERE error IS NOT NULL), sum(alerts_raised), sum(alerts_suppressed),
  coalesce(sum(matches) FILTER (WHERE mode = 'shadow'), 0)
FROM detection_runs GROUP BY deployment_id;
