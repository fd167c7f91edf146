-- Keeps alert_raised_rollup, alert_closed_rollup and alert_backlog (db/schema/alert-rollups.ts) equal
-- to the aggregates of `alerts` they stand for, in the same transaction as every change to alerts.
-- Statement-level triggers with transition tables: a bulk insert of many alerts is one grouped
-- upsert per rollup, not one per alert. Each changed alert counts -1 as it was and +1 as it is;
-- an update that changes nothing a rollup keys or counts is skipped. A tenant being deleted
-- (its rollups go by cascade) is skipped too. Every alert counts in its UTC day, its 8-day and its
-- 64-day span (aligned on 1970-01-01), keyed by the span's first day. Every statement upserts the
-- rollups in one order (raised, closed, backlog; each in key order), so two transactions writing
-- the same rollup rows wait for each other and never deadlock on them. docs/decisions/0055f.
CREATE FUNCTION alert_rollup_span_start(d date, span_days integer) RETURNS date LANGUAGE sql IMMUTABLE PARALLEL SAFE
  RETURN date '1970-01-01' + ((d - date '1970-01-01') - mod(mod(d - date '1970-01-01', span_days) + span_days, span_days));
--> statement-breakpoint
CREATE FUNCTION alert_rollups_apply() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
  changed text;
  counted constant text := 'o.tenant_id, o.target_id, o.rule_id, o.version, o.status, o.disposition, o.team, o.assignee, o.created_at, o.closed_at';
BEGIN
  IF TG_OP = 'INSERT' THEN
    changed := 'SELECT n.*, 1 AS d FROM new_rows n';
  ELSIF TG_OP = 'DELETE' THEN
    changed := 'SELECT o.*, -1 AS d FROM old_rows o';
  ELSE
    changed := format(
      'SELECT o.*, -1 AS d FROM old_rows o JOIN new_rows n USING (id) WHERE (%1$s) IS DISTINCT FROM (%2$s)
       UNION ALL SELECT n.*, 1 FROM new_rows n JOIN old_rows o USING (id) WHERE (%1$s) IS DISTINCT FROM (%2$s)',
      counted, replace(counted, 'o.', 'n.'));
  END IF;
  changed := format('WITH changed AS (SELECT c.* FROM (%s) c WHERE EXISTS (SELECT 1 FROM tenants t WHERE t.id = c.tenant_id)) ', changed);

  EXECUTE changed || $sql$
    INSERT INTO alert_raised_rollup AS r (tenant_id, span_days, day, target_id, rule_id, alerts, triaged, true_positive, false_positive, benign, duplicate)
    SELECT tenant_id, s.span_days, alert_rollup_span_start((created_at AT TIME ZONE 'UTC')::date, s.span_days), target_id, rule_id, sum(d), coalesce(sum(d) FILTER (WHERE status <> 'suppressed'), 0),
      coalesce(sum(d) FILTER (WHERE disposition = 'true_positive'), 0), coalesce(sum(d) FILTER (WHERE disposition = 'false_positive'), 0),
      coalesce(sum(d) FILTER (WHERE disposition = 'benign'), 0), coalesce(sum(d) FILTER (WHERE disposition = 'duplicate'), 0)
    FROM changed CROSS JOIN (VALUES (1), (8), (64)) AS s(span_days) GROUP BY 1, 2, 3, 4, 5 ORDER BY 1, 2, 3, 4, 5
    ON CONFLICT (tenant_id, span_days, day, target_id, rule_id) DO UPDATE SET
      alerts = r.alerts + excluded.alerts, triaged = r.triaged + excluded.triaged, true_positive = r.true_positive + excluded.true_positive,
      false_positive = r.false_positive + excluded.false_positive, benign = r.benign + excluded.benign, duplicate = r.duplicate + excluded.duplicate
  $sql$;

  EXECUTE changed || $sql$
    INSERT INTO alert_closed_rollup AS r (tenant_id, span_days, day, target_id, team, assignee, level, alerts, resolution_ms)
    SELECT c.tenant_id, s.span_days, alert_rollup_span_start((c.closed_at AT TIME ZONE 'UTC')::date, s.span_days), c.target_id, c.team, c.assignee, rv.level, sum(c.d),
      sum(c.d * (extract(epoch FROM (date_trunc('milliseconds', c.closed_at) - date_trunc('milliseconds', c.created_at))) * 1000)::bigint)
    FROM changed c CROSS JOIN (VALUES (1), (8), (64)) AS s(span_days)
      LEFT JOIN rule_versions rv ON rv.tenant_id = c.tenant_id AND rv.rule_id = c.rule_id AND rv.version = c.version
    WHERE c.status = 'closed' AND c.closed_at IS NOT NULL
    GROUP BY 1, 2, 3, 4, 5, 6, 7 ORDER BY 1, 2, 3, 4, 5, 6, 7
    ON CONFLICT (tenant_id, span_days, day, target_id, team, assignee, level) DO UPDATE SET
      alerts = r.alerts + excluded.alerts, resolution_ms = r.resolution_ms + excluded.resolution_ms
  $sql$;

  EXECUTE changed || $sql$
    INSERT INTO alert_backlog AS r (tenant_id, target_id, team, assignee, open, acknowledged)
    SELECT tenant_id, target_id, team, assignee, sum(d), coalesce(sum(d) FILTER (WHERE status = 'acknowledged'), 0)
    FROM changed WHERE status IN ('open', 'acknowledged')
    GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4
    ON CONFLICT (tenant_id, target_id, team, assignee) DO UPDATE SET
      open = r.open + excluded.open, acknowledged = r.acknowledged + excluded.acknowledged
  $sql$;
  RETURN NULL;
END
$fn$;
--> statement-breakpoint
CREATE TRIGGER alerts_rollups_insert AFTER INSERT ON alerts REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION alert_rollups_apply();
--> statement-breakpoint
CREATE TRIGGER alerts_rollups_update AFTER UPDATE ON alerts REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION alert_rollups_apply();
--> statement-breakpoint
CREATE TRIGGER alerts_rollups_delete AFTER DELETE ON alerts REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION alert_rollups_apply();
--> statement-breakpoint
-- The alerts already recorded.
INSERT INTO alert_raised_rollup (tenant_id, span_days, day, target_id, rule_id, alerts, triaged, true_positive, false_positive, benign, duplicate)
SELECT tenant_id, s.span_days, alert_rollup_span_start((created_at AT TIME ZONE 'UTC')::date, s.span_days), target_id, rule_id, count(*), count(*) FILTER (WHERE status <> 'suppressed'),
  count(*) FILTER (WHERE disposition = 'true_positive'), count(*) FILTER (WHERE disposition = 'false_positive'),
  count(*) FILTER (WHERE disposition = 'benign'), count(*) FILTER (WHERE disposition = 'duplicate')
FROM alerts CROSS JOIN (VALUES (1), (8), (64)) AS s(span_days) GROUP BY 1, 2, 3, 4, 5;
--> statement-breakpoint
INSERT INTO alert_closed_rollup (tenant_id, span_days, day, target_id, team, assignee, level, alerts, resolution_ms)
SELECT a.tenant_id, s.span_days, alert_rollup_span_start((a.closed_at AT TIME ZONE 'UTC')::date, s.span_days), a.target_id, a.team, a.assignee, rv.level, count(*),
  sum((extract(epoch FROM (date_trunc('milliseconds', a.closed_at) - date_trunc('milliseconds', a.created_at))) * 1000)::bigint)
FROM alerts a CROSS JOIN (VALUES (1), (8), (64)) AS s(span_days)
  LEFT JOIN rule_versions rv ON rv.tenant_id = a.tenant_id AND rv.rule_id = a.rule_id AND rv.version = a.version
WHERE a.status = 'closed' AND a.closed_at IS NOT NULL
GROUP BY 1, 2, 3, 4, 5, 6, 7;
--> statement-breakpoint
INSERT INTO alert_backlog (tenant_id, target_id, team, assignee, open, acknowledged)
SELECT tenant_id, target_id, team, assignee, count(*), count(*) FILTER (WHERE status = 'acknowledged')
FROM alerts WHERE status IN ('open', 'acknowledged') GROUP BY 1, 2, 3, 4;
