import type { Database } from '../../db/client';

export type LatestRuleRow = {
  tenant_id: string;
  rule_id: string;
  title: string;
  latest_version: number;
  created_at: Date | string;
  updated_at: Date | string;
  level: string | null;
  status: string | null;
  tags: string[];
  logsource: Record<string, string>;
  content: string;
};

const COLUMNS = `r.tenant_id, r.rule_id, r.title, r.latest_version, r.created_at, r.updated_at, v.level, v.status, v.tags, v.logsource, v.content
  from rules r join rule_versions v on v.tenant_id = r.tenant_id and v.rule_id = r.rule_id and v.version = r.latest_version`;
const ONE_SQL = `select ${COLUMNS} where r.tenant_id = $1 and r.rule_id = $2`;
const MANY_SQL = `select ${COLUMNS} where (r.tenant_id, r.rule_id) in (select * from unnest($1::text[], $2::text[]))`;

type Waiter = { resolve: (row: LatestRuleRow | undefined) => void; reject: (err: unknown) => void };

/**
 * Reads a rule with its latest version: the most frequent call of CI pipelines and dashboards.
 *
 * Reads that arrive in the same event-loop turn are answered by one query, issued in the next
 * check phase (setImmediate), for all the rules they ask for. Every read in a group was asked for
 * before its query ran, so it sees every write that finished before it was asked: nothing is
 * cached and nothing stale is served, on PGlite or on PostgreSQL with several API processes. On
 * PGlite, whose WebAssembly backend runs on this event loop, one query per turn instead of one per
 * request is most of what GET /rules/{id} costs (bench/api.ts).
 */
export class LatestRuleReader {
  private pending = new Map<string, { tenantId: string; ruleId: string; waiters: Waiter[] }>();
  private scheduled = false;

  constructor(private readonly database: Database) {}

  read(tenantId: string, ruleId: string): Promise<LatestRuleRow | undefined> {
    return new Promise((resolve, reject) => {
      const key = `${tenantId}\u0000${ruleId}`;
      let group = this.pending.get(key);
      if (!group) {
        group = { tenantId, ruleId, waiters: [] };
        this.pending.set(key, group);
      }
      group.waiters.push({ resolve, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.run());
      }
    });
  }

  private async run(): Promise<void> {
    this.scheduled = false;
    const groups = [...this.pending.values()];
    this.pending.clear();
    try {
      const rows =
        groups.length === 1
          ? await this.database.queryPrepared<LatestRuleRow>('detflow_get_rule', ONE_SQL, [groups[0]!.tenantId, groups[0]!.ruleId])
          : await this.database.queryPrepared<LatestRuleRow>('detflow_get_rules', MANY_SQL, [groups.map((g) => g.tenantId), groups.map((g) => g.ruleId)]);
      const byKey = new Map(rows.map((r) => [`${r.tenant_id}\u0000${r.rule_id}`, r]));
      for (const g of groups) {
        const row = byKey.get(`${g.tenantId}\u0000${g.ruleId}`);
        for (const w of g.waiters) w.resolve(row);
      }
    } catch (err) {
      for (const g of groups) for (const w of g.waiters) w.reject(err);
    }
  }
}
