import { sql } from 'drizzle-orm';
import type { Db } from '../db/client';

/**
 * Seeds a tenant's recorded history in bulk for bench/health.ts: rules with versions, targets with
 * cost models, deployments (superseded versions, rollbacks, demotions, approvals with their impact
 * summaries), alerts over ~90 days, detection runs and replays. Everything is generated in the
 * database (INSERT … SELECT over generate_series), in batches, so a million alerts take seconds on
 * PostgreSQL and minutes on PGlite rather than a million round trips. Counts are exact; the
 * spread (which rule is noisy, dispositions, latencies, resolution times) is random.
 *
 * Runs as separate statements, none relying on session state (no temporary tables), so it works
 * through a connection pool.
 */

export type SeedScale = { rules: number; alerts: number; runs: number; replays: number };

/** ATT&CK techniques and the tactic each rule tagged with it names, as SigmaHQ rules tag them. */
const TECHNIQUES: ReadonlyArray<readonly [string, string]> = [
  ['t1059.001', 'execution'],
  ['t1059.003', 'execution'],
  ['t1059.005', 'execution'],
  ['t1059.004', 'execution'],
  ['t1047', 'execution'],
  ['t1053.005', 'persistence'],
  ['t1543.003', 'persistence'],
  ['t1547.001', 'persistence'],
  ['t1546.003', 'persistence'],
  ['t1136.001', 'persistence'],
  ['t1098', 'persistence'],
  ['t1548.002', 'privilege-escalation'],
  ['t1055', 'privilege-escalation'],
  ['t1134.001', 'privilege-escalation'],
  ['t1068', 'privilege-escalation'],
  ['t1027', 'defense-evasion'],
  ['t1070.001', 'defense-evasion'],
  ['t1112', 'defense-evasion'],
  ['t1218.011', 'defense-evasion'],
  ['t1218.005', 'defense-evasion'],
  ['t1562.001', 'defense-evasion'],
  ['t1036.005', 'stealth'],
  ['t1564.001', 'stealth'],
  ['t1140', 'stealth'],
  ['t1003.001', 'credential-access'],
  ['t1003.002', 'credential-access'],
  ['t1003.003', 'credential-access'],
  ['t1110.003', 'credential-access'],
  ['t1558.003', 'credential-access'],
  ['t1552.001', 'credential-access'],
  ['t1087.002', 'discovery'],
  ['t1082', 'discovery'],
  ['t1018', 'discovery'],
  ['t1069.002', 'discovery'],
  ['t1057', 'discovery'],
  ['t1016', 'discovery'],
  ['t1021.001', 'lateral-movement'],
  ['t1021.002', 'lateral-movement'],
  ['t1021.006', 'lateral-movement'],
  ['t1570', 'lateral-movement'],
  ['t1560.001', 'collection'],
  ['t1005', 'collection'],
  ['t1113', 'collection'],
  ['t1071.001', 'command-and-control'],
  ['t1105', 'command-and-control'],
  ['t1572', 'command-and-control'],
  ['t1219', 'command-and-control'],
  ['t1048.003', 'exfiltration'],
  ['t1567.002', 'exfiltration'],
  ['t1486', 'impact'],
  ['t1490', 'impact'],
  ['t1489', 'impact'],
  ['t1566.001', 'initial-access'],
  ['t1190', 'initial-access'],
  ['t1078', 'initial-access'],
];

const LOGSOURCES = [
  { product: 'windows', category: 'process_creation' },
  { product: 'windows', category: 'process_creation' },
  { product: 'windows', category: 'process_creation' },
  { product: 'windows', service: 'security' },
  { product: 'windows', category: 'registry_set' },
  { product: 'windows', category: 'network_connection' },
  { product: 'linux', category: 'process_creation' },
  { product: 'aws', service: 'cloudtrail' },
];

const TEAMS = ['soc-tier1', 'soc-tier2', 'threat-hunting', 'cloud-sec'];

const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;
const jsonLiteral = (v: unknown) => `${literal(JSON.stringify(v))}::jsonb`;

/** The statements that seed one tenant, each with a label for progress reports; the tenant and its built-in target exist. */
export function seedStatements(tenantId: string, scale: SeedScale, options: { batch?: number } = {}): Array<{ label: string; sql: string }> {
  const t = literal(tenantId);
  const batch = options.batch ?? 100_000;
  const techniques = `(ARRAY[${TECHNIQUES.map(([id]) => literal(id)).join(',')}])`;
  const tactics = `(ARRAY[${TECHNIQUES.map(([, tactic]) => literal(tactic)).join(',')}])`;
  const logsources = `(ARRAY[${LOGSOURCES.map((l) => jsonLiteral(l)).join(',')}])`;
  const teams = `(ARRAY[${TEAMS.map(literal).join(',')}])`;
  const nT = TECHNIQUES.length;
  const out: Array<{ label: string; sql: string }> = [];

  out.push({
    label: 'targets',
    sql: `INSERT INTO targets (tenant_id, name, kind, environment, connection, cost_model) VALUES
      (${t}, 'splunk-prod', 'splunk', 'prod', ${jsonLiteral({ url: 'https://splunk.example.com:8089', index: 'main' })},
        ${jsonLiteral({ currency: 'USD', price_per_gb_scanned: 0.5, triage_minutes_per_alert: 20, cost_per_analyst_hour: 90 })}),
      (${t}, 'elastic-staging', 'elastic', 'staging', ${jsonLiteral({ url: 'https://elastic.example.com:9200', index: 'logs-*' })},
        ${jsonLiteral({ currency: 'USD', price_per_gb_scanned: 0.1, triage_minutes_per_alert: 10, cost_per_analyst_hour: 75 })})
      ON CONFLICT DO NOTHING`,
  });

  // Rule i has 1–3 versions: every 4th a second, every 10th a third. Version v of nv was written
  // (90 / nv) × (v − 1) days after the first, 95 days ago.
  const rulesCte = `r AS (
      SELECT i, md5(${t} || '-rule-' || i)::uuid::text AS rule_id, 1 + (i % 4 = 0)::int + (i % 10 = 0)::int AS nv
      FROM generate_series(1, ${scale.rules}) i)`;
  out.push({
    label: 'rules',
    sql: `INSERT INTO rules (tenant_id, rule_id, title, latest_version, created_at, updated_at)
      WITH ${rulesCte}
      SELECT ${t}, rule_id, 'Bench rule ' || i || ' (v' || nv || ')', nv, now() - interval '95 days', now() - interval '95 days' + (nv - 1) * interval '90 days' / nv FROM r`,
  });
  out.push({
    label: 'rule versions',
    sql: `INSERT INTO rule_versions (tenant_id, rule_id, version, content, content_sha256, title, level, status, tags, logsource, created_at)
      WITH ${rulesCte},
      v AS (
        SELECT r.*, v,
          'Bench rule ' || i || ' (v' || v || ')' AS title,
          (ARRAY['informational','low','medium','medium','high','high','high','critical'])[1 + (i * 7 + v) % 8] AS level,
          (ARRAY['stable','test','experimental'])[1 + i % 3] AS status,
          ${logsources}[1 + i % ${LOGSOURCES.length}] AS logsource,
          1 + (i * 37) % ${nT} AS k1, 1 + (i * 11 + 5) % ${nT} AS k2
        FROM r, generate_series(1, r.nv) v),
      c AS (
        SELECT v.*,
          CASE WHEN i % 3 = 0
            THEN jsonb_build_array('attack.' || ${tactics}[k1], 'attack.' || ${techniques}[k1], 'attack.' || ${tactics}[k2], 'attack.' || ${techniques}[k2])
            ELSE jsonb_build_array('attack.' || ${tactics}[k1], 'attack.' || ${techniques}[k1]) END AS tags
        FROM v),
      y AS (
        SELECT c.*, format(E'title: %s\\nid: %s\\nstatus: %s\\nlevel: %s\\ntags:\\n%slogsource:\\n%sdetection:\\n  selection:\\n    Image|endswith: ''\\\\tool%s.exe''\\n    CommandLine|contains: ''-r%s''\\n  condition: selection\\n',
            title, rule_id, status, level,
            (SELECT string_agg('  - ' || tag, E'\\n') || E'\\n' FROM jsonb_array_elements_text(tags) tag),
            (SELECT string_agg('  ' || key || ': ' || value, E'\\n') || E'\\n' FROM jsonb_each_text(logsource)),
            i, v) AS content
        FROM c)
      SELECT ${t}, rule_id, v, content, encode(sha256(convert_to(content, 'UTF8')), 'hex'), title, level, status, tags, logsource,
        now() - interval '95 days' + (v - 1) * interval '90 days' / nv
      FROM y`,
  });

  // Deployments: every rule (but every 97th, never deployed) on the built-in local target, every
  // 3rd also on splunk-prod, every 7th on elastic-staging; each version replaced the one before
  // (superseded). Every 20th rule's latest version was rolled back two days after going live, and
  // the version before restored; every 50th was demoted by its noise budget; every 5th latest
  // version went through an approval; every 25th has a budget that suppresses, every 45th one that
  // rolls back.
  const deploymentsCte = `${rulesCte},
      tg AS (SELECT id, name FROM targets WHERE tenant_id = ${t}),
      rt AS (
        SELECT r.*, tg.id AS target_id, tg.name AS target FROM r JOIN tg
          ON tg.name = 'local' OR (tg.name = 'splunk-prod' AND r.i % 3 = 0) OR (tg.name = 'elastic-staging' AND r.i % 7 = 0)
        WHERE r.i % 97 <> 0),
      dv AS (
        SELECT rt.*, v, 'regular' AS kind,
          now() - interval '90 days' + (v - 1) * interval '90 days' / nv AS starts,
          CASE WHEN v < nv THEN now() - interval '90 days' + v * interval '90 days' / nv
               WHEN i % 20 = 0 THEN now() - interval '90 days' + (v - 1) * interval '90 days' / nv + interval '2 days' END AS ends,
          CASE WHEN v < nv THEN 'superseded' WHEN i % 20 = 0 THEN 'rolled_back' WHEN i % 50 = 0 THEN 'demoted' ELSE 'active' END AS status
        FROM rt, generate_series(1, rt.nv) v
        UNION ALL
        SELECT rt.*, nv - 1, 'restore',
          now() - interval '90 days' + (nv - 1) * interval '90 days' / nv + interval '2 days', NULL, 'active'
        FROM rt WHERE i % 20 = 0 AND nv >= 2)`;
  out.push({
    label: 'deployments',
    sql: `INSERT INTO deployments (id, tenant_id, rule_id, version, target_id, status, approval_required, noise_budget, workflow_id, run_id, demotion,
        requested_by_principal, created_at, updated_at, activated_at, ended_at)
      WITH ${deploymentsCte}
      SELECT md5(${t} || rule_id || target || v || kind)::uuid, ${t}, rule_id, v, target_id, status,
        kind = 'regular' AND v = nv AND i % 5 = 0,
        CASE WHEN i % 25 = 0 THEN ${jsonLiteral({ max_alerts_per_day: 40, on_exceed: 'suppress' })}
             WHEN i % 45 = 0 THEN ${jsonLiteral({ max_alerts_per_day: 200, on_exceed: 'rollback' })} END,
        'deploy/' || ${t} || '/' || rule_id || '/' || target || '/' || md5(${t} || rule_id || target || v || kind)::uuid,
        md5('run' || rule_id || target || v || kind)::uuid::text,
        CASE WHEN status = 'demoted' THEN jsonb_build_object('demoted_at', to_char((starts + interval '1 day') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
          'reason', 'noise budget exceeded', 'alerts', 120, 'budget', 40) END,
        CASE WHEN kind = 'restore' THEN NULL ELSE 'ci' END,
        starts - interval '5 minutes', coalesce(ends, starts), starts, ends
      FROM dv`,
  });
  out.push({
    label: 'approvals',
    sql: `INSERT INTO approvals (id, tenant_id, rule_id, version, targets, deployment_ids, noise_budget, status, impact, requested_by_principal,
        decided_by_principal, decision, workflow_id, created_at, decided_at, expires_at)
      SELECT md5('approval' || d.id)::uuid, d.tenant_id, d.rule_id, d.version, jsonb_build_array(tg.name), jsonb_build_array(d.id), d.noise_budget, 'approved',
        jsonb_build_object('rule_id', d.rule_id, 'version', d.version, 'noise_budget', d.noise_budget, 'projected_alerts_per_day', p.per_day, 'over_budget', false,
          'computed_at', to_char((d.created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
          'targets', jsonb_build_array(jsonb_build_object('target', tg.name, 'kind', tg.kind, 'environment', tg.environment, 'lookback_days', 7,
            'events_scanned', 250000, 'bytes_scanned', 275000000, 'projected_alerts_per_day', p.per_day, 'current', NULL, 'noise_delta_per_day', p.per_day,
            'over_budget', false, 'diff', '', 'cost_per_day', jsonb_build_object('currency', tg.cost_model->>'currency', 'scanning', 0, 'triage', 0, 'total', 0)))),
        'ci', 'reviewer@example.com', 'approve', d.workflow_id, d.created_at - interval '1 hour', d.created_at, d.created_at + interval '7 days'
      FROM deployments d JOIN targets tg ON tg.id = d.target_id
        CROSS JOIN LATERAL (SELECT round((1 + random() * 30)::numeric, 2) AS per_day) p
      WHERE d.tenant_id = ${t} AND d.approval_required`,
  });

  // Alerts: each picks a deployment (skewed, so a few rules are noisy and many quiet) and a time
  // in the deployment's live window; the event happened seconds to minutes before the alert.
  const liveDeployments = `d AS (
      SELECT id, rule_id, version, target_id, activated_at AS starts, coalesce(ended_at, now()) AS until, noise_budget IS NOT NULL AS budgeted,
        abs(hashtext(rule_id)) % ${TEAMS.length} AS team_k,
        (row_number() OVER (ORDER BY md5(id::text)) - 1) AS n
      FROM deployments WHERE tenant_id = ${t} AND activated_at IS NOT NULL),
      dc AS (SELECT count(*) AS c FROM d)`;
  for (let from = 1; from <= scale.alerts; from += batch) {
    const to = Math.min(scale.alerts, from + batch - 1);
    out.push({
      label: `alerts ${from.toLocaleString('en-US')}–${to.toLocaleString('en-US')}`,
      sql: `INSERT INTO alerts (tenant_id, deployment_id, rule_id, version, target_id, event_seq, event_id, event_time, event, status, disposition,
          assignee, team, created_at, updated_at, acknowledged_at, closed_at)
        WITH ${liveDeployments},
        s AS (SELECT g, random() AS r1, random() AS r2, random() AS r3, random() AS r4, random() AS r5, random() AS r6,
                floor(power(random(), 2.5) * (SELECT c FROM dc))::bigint AS n FROM generate_series(${from}, ${to}) g),
        a AS (
          SELECT s.*, d.id AS deployment_id, d.rule_id, d.version, d.target_id, d.team_k,
            d.starts + s.r1 * (d.until - d.starts) AS created_at,
            CASE WHEN d.budgeted AND s.r3 < 0.3 THEN 'suppressed'
                 WHEN d.starts + s.r1 * (d.until - d.starts) < now() - interval '3 days'
                   THEN CASE WHEN s.r3 < 0.85 THEN 'closed' WHEN s.r3 < 0.92 THEN 'acknowledged' ELSE 'open' END
                 ELSE CASE WHEN s.r3 < 0.3 THEN 'closed' WHEN s.r3 < 0.5 THEN 'acknowledged' ELSE 'open' END END AS status
          FROM s JOIN d ON d.n = s.n),
        b AS (
          SELECT a.*,
            CASE WHEN status IN ('acknowledged', 'closed') THEN least(now(), created_at + (1 + r5 * 120) * interval '1 minute') END AS acknowledged_at
          FROM a)
        SELECT ${t}, deployment_id, rule_id, version, target_id, g, 'evt-' || g,
          created_at - (2 + floor(power(r2, 3) * 900)) * interval '1 second',
          jsonb_build_object('Computer', 'host-' || (g % 500), 'Image', 'C:\\Tools\\tool' || (g % 97) || '.exe'),
          status,
          CASE WHEN status = 'closed' THEN CASE WHEN r4 < 0.22 THEN 'true_positive' WHEN r4 < 0.67 THEN 'false_positive' WHEN r4 < 0.92 THEN 'benign'
                                                WHEN r4 < 0.96 THEN 'duplicate' END
               WHEN status = 'acknowledged' AND r4 < 0.1 THEN 'true_positive' END,
          CASE WHEN status = 'suppressed' OR (status = 'open' AND r5 < 0.5) THEN NULL ELSE 'analyst' || (team_k * 10 + floor(r5 * 10)::int) || '@example.com' END,
          CASE WHEN status = 'suppressed' THEN NULL ELSE ${teams}[1 + team_k] END,
          created_at,
          coalesce(CASE WHEN status = 'closed' THEN least(now(), acknowledged_at + power(r6, 2) * interval '72 hours') END, acknowledged_at, created_at),
          acknowledged_at,
          CASE WHEN status = 'closed' THEN least(now(), acknowledged_at + power(r6, 2) * interval '72 hours') END
        FROM b`,
    });
  }

  for (let from = 1; from <= scale.runs; from += batch) {
    const to = Math.min(scale.runs, from + batch - 1);
    out.push({
      label: `detection runs ${from.toLocaleString('en-US')}–${to.toLocaleString('en-US')}`,
      sql: `INSERT INTO detection_runs (tenant_id, deployment_id, rule_id, started_at, duration_ms, events_scanned, matches, alerts_raised, alerts_suppressed,
          mode, cursor_from, cursor_to, error)
        WITH ${liveDeployments},
        s AS (SELECT g, random() AS r1, random() AS r2, random() AS r3, random() AS r4, floor(random() * (SELECT c FROM dc))::bigint AS n
              FROM generate_series(${from}, ${to}) g),
        x AS (
          SELECT s.*, d.id AS deployment_id, d.rule_id, d.starts + s.r1 * (d.until - d.starts) AS started_at, d.budgeted,
            r4 < 0.02 AS failed, 1000 + floor(r2 * 50000)::bigint AS scanned, floor(power(r3, 4) * 40)::int AS matches
          FROM s JOIN d ON d.n = s.n)
        SELECT ${t}, deployment_id, rule_id, started_at, 20 + floor(power(r2, 3) * 3000)::int,
          CASE WHEN failed THEN 0 ELSE scanned END, CASE WHEN failed THEN 0 ELSE matches END,
          CASE WHEN failed THEN 0 WHEN budgeted THEN matches - matches / 3 ELSE matches END,
          CASE WHEN failed OR NOT budgeted THEN 0 ELSE matches / 3 END,
          'alert', g::bigint * 100000, g::bigint * 100000 + CASE WHEN failed THEN 0 ELSE scanned END,
          CASE WHEN failed THEN (ARRAY['adapter error: the local store did not answer within 30 s', 'query failed: Binder Error: column "CommandLine" not found',
                                       'the target refused the search: 429 Too Many Requests'])[1 + floor(r1 * 3)::int] END
        FROM x`,
    });
  }

  // Replays of the versions that were later replaced: the replaced version's replayed rate.
  out.push({
    label: 'replays',
    sql: `INSERT INTO replays (id, tenant_id, rule_id, version, rule_content, target_id, window_from, window_to, noise_budget, chunk_events, status, result,
        workflow_id, run_id, created_at, updated_at, ended_at)
      SELECT md5('replay' || rv.rule_id || rv.version)::uuid, ${t}, rv.rule_id, rv.version, rv.content, tg.id,
        rv.created_at - interval '7 days', rv.created_at, NULL, 100000, 'completed',
        jsonb_build_object('window_processed', jsonb_build_object('from', to_char((rv.created_at - interval '7 days') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
            'to', to_char(rv.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')),
          'events_scanned', 700000, 'bytes_scanned', 770000000,
          'alerts', jsonb_build_object('total', p.total, 'per_day', '[]'::jsonb, 'mean_per_day', round(p.total / 7.0, 2), 'peak_per_day', p.total / 4)),
        'replay/' || ${t} || '/' || md5('replay' || rv.rule_id || rv.version)::uuid, md5('replay-run' || rv.rule_id || rv.version)::uuid::text,
        rv.created_at, rv.created_at + interval '2 minutes', rv.created_at + interval '2 minutes'
      FROM (SELECT * FROM rule_versions WHERE tenant_id = ${t} AND version > 1 ORDER BY rule_id, version LIMIT ${scale.replays}) rv
        JOIN targets tg ON tg.tenant_id = ${t} AND tg.name = 'local'
        CROSS JOIN LATERAL (SELECT floor(20 + random() * 400)::int AS total) p`,
  });
  return out;
}

/** Seeds one tenant (which must exist with its built-in target); calls `progress` after each statement with its label and time. */
export async function seedTenant(db: Db, tenantId: string, scale: SeedScale, progress: (label: string, ms: number) => void = () => undefined): Promise<void> {
  for (const s of seedStatements(tenantId, scale)) {
    const t0 = performance.now();
    await db.execute(sql.raw(s.sql));
    progress(s.label, performance.now() - t0);
  }
}

/** The rows of a raw query; both drivers' results carry `rows`. */
export async function queryRows<T>(db: Db, text: string): Promise<T[]> {
  const result = (await db.execute(sql.raw(text))) as unknown as { rows: T[] };
  return result.rows;
}
