import type { LocalEventStore } from '../siem/local/event-store';

/**
 * Events in the local store for bench/health.ts, so the rule-health data-quality figures (which
 * fields of a rule's logsource recent events carry, how fresh the newest is) read a real store:
 * the last `days` days, evenly spread up to a minute ago, in the logsources the seeded rules use —
 * but none for `aws/cloudtrail`, so those rules have no data, and one Windows process-creation
 * event in ten without its command line. Generated inside DuckDB (range() and hash()), with the
 * promoted columns equal to the JSON's fields, as ingestion would store them.
 */
export type EventSeed = { tenantId: string; targetId: string; events: number };

const str = (s: string) => `'${s.replace(/'/g, "''")}'`;
/** A DuckDB TIMESTAMP (UTC, no zone) literal. */
const ts = (d: Date) => `TIMESTAMP '${d.toISOString().replace('T', ' ').replace('Z', '')}'`;

export async function seedEvents(store: LocalEventStore, seeds: readonly EventSeed[], options: { days: number; now?: Date }): Promise<number> {
  const now = options.now ?? new Date();
  const to = new Date(now.getTime() - 60_000);
  const from = new Date(to.getTime() - options.days * 86_400_000);
  const total = seeds.reduce((n, s) => n + s.events, 0);
  await store.write(async (con) => {
    let offset = 0;
    for (const seed of seeds) {
      const stepUs = Math.max(1, Math.floor(((to.getTime() - from.getTime()) * 1000) / seed.events));
      // k picks the logsource: 0–5 Windows process creation, 6 Security, 7 registry, 8 network, 9 Linux process creation.
      await con.run(`INSERT INTO events BY NAME
        SELECT ${offset} + i + 1 AS seq, ${str(seed.tenantId)} AS tenant_id, ${str(seed.targetId)} AS target_id, 'ev-' || (${offset} + i) AS event_id,
          t AS event_time, t + INTERVAL 5 SECOND AS ingested_at,
          CASE WHEN k = 9 THEN 'linux' ELSE 'windows' END AS ls_product,
          CASE WHEN k <= 5 OR k = 9 THEN 'process_creation' WHEN k = 7 THEN 'registry_set' WHEN k = 8 THEN 'network_connection' END AS ls_category,
          CASE WHEN k = 6 THEN 'security' END AS ls_service,
          strlen(raw) AS raw_bytes, raw,
          image AS "Image", cmd AS "CommandLine", usr AS "User", host AS "Computer", target_object AS "TargetObject", dst_ip AS "DestinationIp",
          dst_port AS "DestinationPort", event_id AS "EventID", target_user AS "TargetUserName", logon_type AS "LogonType"
        FROM (
          SELECT *, '{' || concat_ws(',',
              '"EventID":' || event_id,
              '"Computer":' || to_json(host),
              CASE WHEN image IS NOT NULL THEN '"Image":' || to_json(image) END,
              CASE WHEN cmd IS NOT NULL THEN '"CommandLine":' || to_json(cmd) END,
              CASE WHEN usr IS NOT NULL THEN '"User":' || to_json(usr) END,
              CASE WHEN target_object IS NOT NULL THEN '"TargetObject":' || to_json(target_object) END,
              CASE WHEN dst_ip IS NOT NULL THEN '"DestinationIp":' || to_json(dst_ip) || ',"DestinationPort":' || dst_port END,
              CASE WHEN target_user IS NOT NULL THEN '"TargetUserName":' || to_json(target_user) || ',"LogonType":' || logon_type END) || '}' AS raw
          FROM (
            SELECT i, k, ${ts(from)} + to_microseconds((i * ${stepUs})::BIGINT) AS t,
              CASE WHEN k = 6 THEN '4624' WHEN k = 7 THEN '13' WHEN k = 8 THEN '3' ELSE '1' END AS event_id,
              'ws-' || (hash(i * 19) % 2000) || '.corp.example' AS host,
              CASE WHEN k <> 6 THEN (CASE WHEN k = 9 THEN '/usr/bin/tool' ELSE 'C:\\Tools\\tool' END) || (hash(i * 5) % 1000) || (CASE WHEN k = 9 THEN '' ELSE '.exe' END) END AS image,
              CASE WHEN (k <= 5 AND hash(i * 7) % 10 <> 0) OR k = 9 THEN 'tool' || (hash(i * 5) % 1000) || ' -r' || (hash(i * 11) % 3 + 1) END AS cmd,
              CASE WHEN k <= 5 OR k = 9 THEN 'CORP\\user' || (hash(i * 17) % 500) END AS usr,
              CASE WHEN k = 7 THEN 'HKLM\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Run\\item' || (hash(i * 13) % 50) END AS target_object,
              CASE WHEN k = 8 THEN '10.0.' || (hash(i * 23) % 256) || '.' || (hash(i * 29) % 256) END AS dst_ip,
              CASE WHEN k = 8 THEN (['443', '80', '445', '3389'])[(1 + hash(i * 31) % 4)::INTEGER] END AS dst_port,
              CASE WHEN k = 6 THEN 'user' || (hash(i * 37) % 500) END AS target_user,
              CASE WHEN k = 6 THEN (['2', '3', '10'])[(1 + hash(i * 41) % 3)::INTEGER] END AS logon_type
            FROM (SELECT i, (hash(i * 3) % 10)::INTEGER AS k FROM range(${seed.events}) r(i))
          )
        )`);
      offset += seed.events;
    }
    await con.run(`INSERT INTO event_hours SELECT tenant_id, date_trunc('hour', event_time), count(*), target_id FROM events GROUP BY ALL`);
    await con.run(`INSERT INTO ingest_batches VALUES ('bench-health-generated', ${str(seeds[0]?.tenantId ?? 'bench')}, 1, ${total}, ${total}, ${total}, 0, ${ts(now)})`);
    await con.run('CHECKPOINT');
  });
  return total;
}
