import type { DuckDBConnection, DuckDBValue } from '@duckdb/node-api';
import type { CompiledRule, DeployedRule, DeploymentState, DeployRequest, DeployResult, RuleLogsource, UndeployResult } from '../adapter';
import { exec, rows, transaction } from './duckdb';
import { readCommittedCursor } from './event-queries';
import type { LocalEventStore } from './event-store';

/**
 * Rules deployed on a local target, kept in the target's own DuckDB database so the target works
 * on its own (the service additionally records deployments in Postgres).
 *
 * Idempotency: the deployment id is the key. Deploying an id again with the same rule is a no-op
 * (an activity retry); with a different rule it is a conflict. Deploying the version already active
 * for the rule on the same target under another id is also a no-op and answers the active
 * deployment. At most one deployment per (tenant, target, rule) is active; a new version supersedes
 * the previous one on its target, and a deployment on another target is left alone.
 *
 * `detection_cursor` is still set (inherited from the superseded version), but scheduled detection
 * is the service's now (activities/detection.ts, cursor in its database) and nothing here reads it;
 * the column stays for the files that have it.
 */

export const DEPLOYMENTS_DDL = `CREATE TABLE IF NOT EXISTS deployed_rules (
  deployment_id VARCHAR PRIMARY KEY,
  tenant_id VARCHAR NOT NULL,
  rule_id VARCHAR NOT NULL,
  version INTEGER NOT NULL,
  query VARCHAR NOT NULL,
  logsource VARCHAR,              -- JSON of RuleLogsource, NULL when the rule has none
  title VARCHAR,
  level VARCHAR,
  state VARCHAR NOT NULL,         -- active | superseded | undeployed
  deployed_at TIMESTAMP NOT NULL,
  ended_at TIMESTAMP,
  detection_cursor BIGINT NOT NULL, -- set at deployment only: scheduled detection keeps its cursor in the service's database
  target_id VARCHAR               -- the target it is deployed on (NULL in files written before targets, until adopted)
)`;

/** Files written before targets have the table without target_id (see LocalEventStore.adoptUntargetedEvents). */
const DEPLOYMENTS_TARGET_COLUMN = `ALTER TABLE deployed_rules ADD COLUMN IF NOT EXISTS target_id VARCHAR`;

/** Deploying an id that already names a different rule or version. */
export class DeploymentConflictError extends Error {
  override readonly name = 'DeploymentConflictError';
}

export interface ActiveDeployment extends DeployedRule {
  readonly detectionCursor: number;
}

export class DeploymentRegistry {
  private ready: Promise<void> | undefined;

  constructor(private readonly store: LocalEventStore) {}

  private init(): Promise<void> {
    this.ready ??= this.store.write(async (con) => {
      await exec(con, DEPLOYMENTS_DDL);
      await exec(con, DEPLOYMENTS_TARGET_COLUMN);
    });
    return this.ready;
  }

  async deploy(request: DeployRequest, now: Date): Promise<DeployResult> {
    const { deploymentId, tenantId, targetId, rule } = request;
    if (!deploymentId || !tenantId || !targetId) throw new RangeError('deploymentId, tenantId and targetId are required');
    await this.init();
    return this.store.write((con) =>
      transaction(con, async () => {
        const same = await this.find(con, `deployment_id = $1`, [deploymentId]);
        if (same[0]) {
          const d = same[0];
          if (d.tenantId !== tenantId || d.targetId !== targetId || d.ruleId !== rule.ruleId || d.version !== rule.version) {
            throw new DeploymentConflictError(
              `deployment ${deploymentId} already exists for rule ${d.ruleId} v${d.version} of tenant ${d.tenantId} on target ${d.targetId}; it cannot be reused for rule ${rule.ruleId} v${rule.version} on target ${targetId}`,
            );
          }
          // The same rule version compiled again with new target settings (placeholder values, a
          // mapping) replaces its query in place, keeping its detection cursor.
          if (d.query !== rule.query && d.state === 'active') {
            await exec(con, `UPDATE deployed_rules SET query = $2 WHERE deployment_id = $1`, [deploymentId, rule.query]);
            return { changed: true, deployment: (await this.find(con, `deployment_id = $1`, [deploymentId]))[0]!, superseded: null };
          }
          if (d.state === 'active') return { changed: false, deployment: d, superseded: null };
          // Deploying an id that was taken off (out of band, or by an undeploy the service did not
          // record) puts it back: that is how a drifted deployment is restored.
          const other = (await this.find(con, `tenant_id = $1 AND target_id = $2 AND rule_id = $3 AND state = 'active'`, [tenantId, targetId, rule.ruleId]))[0];
          if (other) await exec(con, `UPDATE deployed_rules SET state = 'superseded', ended_at = $2::TIMESTAMP WHERE deployment_id = $1`, [other.deploymentId, iso(now)]);
          await exec(con, `UPDATE deployed_rules SET state = 'active', ended_at = NULL WHERE deployment_id = $1`, [deploymentId]);
          const deployment = (await this.find(con, `deployment_id = $1`, [deploymentId]))[0]!;
          return { changed: true, deployment, superseded: other?.deploymentId ?? null };
        }
        const active = (await this.find(con, `tenant_id = $1 AND target_id = $2 AND rule_id = $3 AND state = 'active'`, [tenantId, targetId, rule.ruleId]))[0];
        if (active && active.version === rule.version && active.query === rule.query) return { changed: false, deployment: active, superseded: null };
        let cursor = active?.detectionCursor;
        if (cursor === undefined) {
          // A first deployment detects from now on: history is what replay is for.
          cursor = await readCommittedCursor(con);
        }
        if (active) await exec(con, `UPDATE deployed_rules SET state = 'superseded', ended_at = $2::TIMESTAMP WHERE deployment_id = $1`, [active.deploymentId, iso(now)]);
        await exec(
          con,
          `INSERT INTO deployed_rules (deployment_id, tenant_id, rule_id, version, query, logsource, title, level, state, deployed_at, ended_at, detection_cursor, target_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'active', $9::TIMESTAMP, NULL, $10, $11)`,
          [
            deploymentId,
            tenantId,
            rule.ruleId,
            rule.version,
            rule.query,
            rule.logsource ? JSON.stringify(rule.logsource) : null,
            rule.title ?? null,
            rule.level ?? null,
            iso(now),
            cursor,
            targetId,
          ] as DuckDBValue[],
        );
        const deployment = (await this.find(con, `deployment_id = $1`, [deploymentId]))[0]!;
        return { changed: true, deployment, superseded: active?.deploymentId ?? null };
      }),
    );
  }

  async undeploy(tenantId: string, deploymentId: string, now: Date): Promise<UndeployResult> {
    await this.init();
    return this.store.write(async (con) => {
      const r = await rows(
        con,
        `UPDATE deployed_rules SET state = 'undeployed', ended_at = $3::TIMESTAMP WHERE deployment_id = $1 AND tenant_id = $2 AND state = 'active' RETURNING deployment_id`,
        [deploymentId, tenantId, iso(now)],
      );
      return { changed: r.length > 0 };
    });
  }

  /** Active deployments of the tenant on one target (on every target when `targetId` is left out), by rule id. */
  async listActive(tenantId: string, targetId?: string): Promise<ActiveDeployment[]> {
    await this.init();
    if (targetId === undefined) return this.store.read((con) => this.find(con, `tenant_id = $1 AND state = 'active' ORDER BY rule_id, target_id`, [tenantId]));
    return this.store.read((con) => this.find(con, `tenant_id = $1 AND target_id = $2 AND state = 'active' ORDER BY rule_id`, [tenantId, targetId]));
  }

  /** Every deployment of a tenant's rule (history included), newest first. */
  async history(tenantId: string, ruleId: string): Promise<ActiveDeployment[]> {
    await this.init();
    return this.store.read((con) => this.find(con, `tenant_id = $1 AND rule_id = $2 ORDER BY deployed_at DESC, deployment_id`, [tenantId, ruleId]));
  }

  private async find(con: DuckDBConnection, where: string, params: DuckDBValue[]): Promise<ActiveDeployment[]> {
    const found = await rows(
      con,
      `SELECT deployment_id, tenant_id, target_id, rule_id, version, query, logsource, title, level, state, epoch_ms(deployed_at) AS deployed_ms, detection_cursor
       FROM deployed_rules WHERE ${where}`,
      params,
    );
    return found.map((r) => {
      const logsource = r.logsource === null ? undefined : (JSON.parse(String(r.logsource)) as RuleLogsource);
      return {
        deploymentId: String(r.deployment_id),
        tenantId: String(r.tenant_id),
        targetId: r.target_id === null ? null : String(r.target_id),
        ruleId: String(r.rule_id),
        version: Number(r.version),
        query: String(r.query),
        ...(logsource ? { logsource } : {}),
        state: String(r.state) as DeploymentState,
        deployedAt: new Date(Number(r.deployed_ms)),
        detectionCursor: Number(r.detection_cursor),
      };
    });
  }
}

function iso(d: Date): string {
  return d.toISOString();
}

export function compiledRuleOf(d: DeployedRule): CompiledRule {
  return { ruleId: d.ruleId, version: d.version, query: d.query, ...(d.logsource ? { logsource: d.logsource } : {}) };
}
