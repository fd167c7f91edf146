import crypto from 'node:crypto';
import { and, eq, inArray, max, sql } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { approvals, deployments, environments, ruleVersions, settingsVersions, targets } from '../../db/schema';
import type { SiemAdapters, TargetRef } from '../../siem/adapters';
import { parseRule, placeholdersUsed } from '../../sigma';
import type { DomainDeps } from '../deps';
import { conflict } from '../errors';
import { LIVE_DEPLOYMENT_STATUSES } from '../statuses';
import type { Actor } from '../tenants/actor';
import { startOrJoin } from '../runs/start-or-join';
import { compileRuleForTarget, targetAdapter } from '../rules/rule-compilation';
import { PROJECTION_LOOKBACK_DAYS } from '../changes/impact-summary';
import type { SettingsChange } from '../../workflows/settings-change';
import type { SettingsChangeInput } from '../../workflows/change-messages';
import { KIND, RULE_ID, STATUS, TARGET, TENANT, WorkflowType, workflowIds } from '../../workflows/contracts';
import { resolvedPlaceholders, type Placeholders } from './placeholders';
import { sameMapping } from './target-mapping';
import { findTarget, replaceTarget, type TargetRow, type TargetSettings } from './targets';
import {
  applyTargetPlaceholders,
  canonical,
  recordSettingsVersion,
  setEnvironmentPlaceholders,
  targetPlaceholders,
  type EnvironmentPlaceholders,
  type TargetPlaceholders,
} from './target-settings';

/** The mapping settings of a target's connection (`mapping`, `field_map`), as a version records them. */
export type MappingSettings = { mapping?: string; field_map?: string };

export function mappingSettingsOf(connection: Readonly<Record<string, unknown>>): MappingSettings {
  const out: MappingSettings = {};
  if (typeof connection.mapping === 'string') out.mapping = connection.mapping;
  if (typeof connection.field_map === 'string') out.field_map = connection.field_map;
  return out;
}

/** What an approval of a settings change names as its rule: the target's settings, not a rule. */
export const settingsSubject = (targetName: string) => `target-settings/${targetName}`;

/** The proposed settings of a target: its own placeholder values, the resolved ones, and its connection with the proposed mapping. */
type Proposal = { placeholders: Placeholders; resolved: Placeholders; connection: Record<string, unknown> };

function proposalOf(target: TargetRow, row: { placeholders: Placeholders; mapping: MappingSettings | null }, environmentDefaults: Placeholders): Proposal {
  const connection: Record<string, unknown> = { ...target.connection };
  if (row.mapping) {
    delete connection.mapping;
    delete connection.field_map;
    Object.assign(connection, row.mapping);
  }
  return { placeholders: row.placeholders, resolved: resolvedPlaceholders(environmentDefaults, row.placeholders), connection };
}

export type AffectedDeployment = { deployment_id: string; rule_id: string; version: number; title: string; reason: string };

/**
 * The live deployments of the target a settings change alters: with a new mapping, every one (the
 * mapping shapes every query); otherwise those whose rule uses a placeholder whose values change.
 */
export async function affectedDeployments(db: Db, target: TargetRow, proposal: Proposal): Promise<AffectedDeployment[]> {
  const mappingChanged = !sameMapping(target.kind, target.connection, proposal.connection);
  const changed = new Set(
    [...new Set([...Object.keys(target.resolvedPlaceholders), ...Object.keys(proposal.resolved)])].filter(
      (n) => JSON.stringify(target.resolvedPlaceholders[n] ?? null) !== JSON.stringify(proposal.resolved[n] ?? null),
    ),
  );
  if (!mappingChanged && changed.size === 0) return [];
  const live = await db
    .select({ id: deployments.id, ruleId: deployments.ruleId, version: deployments.version, content: ruleVersions.content })
    .from(deployments)
    .innerJoin(ruleVersions, and(eq(ruleVersions.tenantId, deployments.tenantId), eq(ruleVersions.ruleId, deployments.ruleId), eq(ruleVersions.version, deployments.version)))
    .where(and(eq(deployments.targetId, target.id), inArray(deployments.status, [...LIVE_DEPLOYMENT_STATUSES, 'deploying', 'pending_approval'])));
  const out: AffectedDeployment[] = [];
  for (const d of live) {
    let rule;
    try {
      rule = parseRule(d.content);
    } catch {
      continue;
    }
    const uses = placeholdersUsed(rule)
      .map((p) => p.name)
      .filter((n) => changed.has(n));
    if (mappingChanged) out.push({ deployment_id: d.id, rule_id: d.ruleId, version: d.version, title: rule.title, reason: 'the field mapping changes' });
    else if (uses.length) out.push({ deployment_id: d.id, rule_id: d.ruleId, version: d.version, title: rule.title, reason: `uses ${uses.map((n) => `%${n}%`).join(', ')}` });
  }
  return out;
}

export type SubmittedSettings =
  { outcome: 'applied' } | { outcome: 'pending'; approvalId: string; proposedVersion: number; affected: AffectedDeployment[]; workflowId: string };

/**
 * Submits new rule-shaping settings of a target (its own placeholder values, its mapping). When
 * live rules on the target would compile differently, the settings become a proposed version
 * behind an approval (the caller answers 202) and `apply` is not called; otherwise `apply` makes
 * them current at once (still a version, on record).
 */
export async function submitTargetSettings(
  deps: DomainDeps,
  auth: Actor,
  target: TargetRow,
  proposed: { placeholders: Placeholders; mapping: MappingSettings | null; environmentDefaults: Placeholders },
  options: { description?: string | null; expiresInMs?: number },
): Promise<SubmittedSettings> {
  const { db } = deps.database;
  const proposal = proposalOf(target, proposed, proposed.environmentDefaults);
  const affected = await affectedDeployments(db, target, proposal);
  if (affected.length === 0) return { outcome: 'applied' };

  const expiresInMs = options.expiresInMs ?? 7 * 86_400_000;
  const approvalId = crypto.randomUUID();
  const subject = settingsSubject(target.name);
  const workflowId = workflowIds.approval(auth.tenantId, subject, approvalId);
  const changeKey = `settings:${target.id}:${crypto
    .createHash('sha256')
    .update(`${canonical(proposed.placeholders)}|${JSON.stringify(proposed.mapping)}`)
    .digest('hex')}`;
  const proposedVersion = await db.transaction(async (tx) => {
    const [pending] = await tx
      .select({ id: settingsVersions.id })
      .from(settingsVersions)
      .where(
        and(
          eq(settingsVersions.tenantId, auth.tenantId),
          eq(settingsVersions.subject, 'target'),
          eq(settingsVersions.name, target.name),
          eq(settingsVersions.status, 'proposed'),
        ),
      );
    if (pending) throw conflict(`Target ${target.name} has a settings change waiting for approval already; decide it first`);
    const [top] = await tx
      .select({ v: max(settingsVersions.version) })
      .from(settingsVersions)
      .where(and(eq(settingsVersions.tenantId, auth.tenantId), eq(settingsVersions.subject, 'target'), eq(settingsVersions.name, target.name)));
    const version = Math.max(Number(top?.v ?? 0), target.settingsVersion) + 1;
    await tx.insert(settingsVersions).values({
      tenantId: auth.tenantId,
      subject: 'target',
      name: target.name,
      version,
      placeholders: proposed.placeholders,
      mapping: proposed.mapping,
      status: 'proposed',
      approvalId,
      requestedBy: auth.tokenId,
      requestedByPrincipal: auth.principal,
    });
    await tx.insert(approvals).values({
      id: approvalId,
      tenantId: auth.tenantId,
      ruleId: subject,
      version,
      targets: [target.name],
      deploymentIds: [],
      noiseBudget: null,
      status: 'pending',
      description: options.description ?? `Settings of target ${target.name}: version ${version} (${affected.length} live rule(s) affected)`,
      link: null,
      requestedBy: auth.tokenId,
      requestedByPrincipal: auth.principal,
      workflowId,
      changeKey,
      expiresAt: new Date(Date.now() + expiresInMs),
    });
    return version;
  });
  const input: SettingsChangeInput = {
    tenantId: auth.tenantId,
    targetId: target.id,
    targetName: target.name,
    version: proposedVersion,
    approval: { approvalId, requestedBy: auth.tokenId, expiresInMs },
  };
  await startOrJoin<typeof SettingsChange>(deps.temporal.client, WorkflowType.SettingsChange, {
    workflowId,
    taskQueue: deps.temporal.taskQueue,
    args: [input],
    staticSummary: `Settings of target ${target.name}, version ${proposedVersion}: waiting for approval`,
    typedSearchAttributes: [
      { key: TENANT, value: auth.tenantId },
      { key: RULE_ID, value: subject },
      { key: TARGET, value: target.name },
      { key: KIND, value: 'approval' },
      { key: STATUS, value: 'pending_approval' },
    ],
  });
  return { outcome: 'pending', approvalId, proposedVersion, affected, workflowId };
}

async function loadProposal(db: Db, tenantId: string, targetId: string, version: number) {
  const [target] = await db.select().from(targets).where(eq(targets.id, targetId));
  if (!target) throw new Error(`No target ${targetId}`);
  const [row] = await db
    .select()
    .from(settingsVersions)
    .where(
      and(eq(settingsVersions.tenantId, tenantId), eq(settingsVersions.subject, 'target'), eq(settingsVersions.name, target.name), eq(settingsVersions.version, version)),
    );
  if (!row) throw new Error(`No settings version ${version} of target ${target.name}`);
  const [env] = await db
    .select({ placeholders: environments.placeholders })
    .from(environments)
    .where(and(eq(environments.tenantId, tenantId), eq(environments.name, target.environment)));
  return { target, row, proposal: proposalOf(target, { placeholders: row.placeholders, mapping: row.mapping }, env?.placeholders ?? {}) };
}

export type SettingsImpact = {
  kind: 'settings';
  target: string;
  from_version: number;
  to_version: number;
  placeholders: { before: Placeholders; after: Placeholders };
  mapping: { before: MappingSettings; after: MappingSettings } | null;
  lookback_days: number;
  /** Each affected live rule replayed over the lookback with the settings in force and with the proposed ones. */
  rules: Array<AffectedDeployment & { matched_before: number; matched_after: number; events_scanned: number; error: string | null }>;
  computed_at: string;
};

/** The impact of a proposed settings version: the affected live rules, each replayed with the current and the proposed settings. */
export async function computeSettingsImpact(
  deps: { db: Db; siem: SiemAdapters },
  input: { tenantId: string; targetId: string; version: number; now: Date },
): Promise<SettingsImpact> {
  const { target, row, proposal } = await loadProposal(deps.db, input.tenantId, input.targetId, input.version);
  const affected = await affectedDeployments(deps.db, target, proposal);
  const window = { from: new Date(input.now.getTime() - PROJECTION_LOOKBACK_DAYS * 86_400_000), to: input.now };
  const before: TargetRef = target;
  const after: TargetRef = { ...target, connection: proposal.connection, resolvedPlaceholders: proposal.resolved };
  const rules: SettingsImpact['rules'] = [];
  for (const a of affected) {
    const [v] = await deps.db
      .select({ content: ruleVersions.content })
      .from(ruleVersions)
      .where(and(eq(ruleVersions.tenantId, input.tenantId), eq(ruleVersions.ruleId, a.rule_id), eq(ruleVersions.version, a.version)));
    const count = async (ref: TargetRef) => {
      const compiled = compileRuleForTarget(deps.siem, v!.content, a.rule_id, a.version, ref);
      return targetAdapter(deps.siem, ref).count(input.tenantId, target.id, compiled, window);
    };
    try {
      const [b, n] = [await count(before), await count(after)];
      rules.push({ ...a, matched_before: b.matched, matched_after: n.matched, events_scanned: n.scanned, error: null });
    } catch (err) {
      rules.push({ ...a, matched_before: 0, matched_after: 0, events_scanned: 0, error: (err as Error).message });
    }
  }
  const mappingChanged = !sameMapping(target.kind, target.connection, proposal.connection);
  return {
    kind: 'settings',
    target: target.name,
    from_version: target.settingsVersion,
    to_version: row.version,
    placeholders: { before: target.resolvedPlaceholders, after: proposal.resolved },
    mapping: mappingChanged ? { before: mappingSettingsOf(target.connection), after: mappingSettingsOf(proposal.connection) } : null,
    lookback_days: PROJECTION_LOOKBACK_DAYS,
    rules,
    computed_at: input.now.toISOString(),
  };
}

/**
 * Makes an approved settings version current and puts the affected live rules on the target again,
 * compiled with it; each deployment records the settings version. Idempotent: a version already
 * current is not applied twice, and a redeploy is keyed by the deployment id.
 */
export async function applySettingsVersion(
  deps: { db: Db; siem: SiemAdapters },
  input: { tenantId: string; targetId: string; version: number },
): Promise<{ redeployed: string[] }> {
  const { db, siem } = deps;
  const { target, row, proposal } = await loadProposal(db, input.tenantId, input.targetId, input.version);
  const affected = row.status === 'proposed' ? await affectedDeployments(db, target, proposal) : [];
  if (row.status === 'proposed') {
    await db.transaction(async (tx) => {
      await tx
        .update(settingsVersions)
        .set({ status: 'superseded', decidedAt: new Date() })
        .where(
          and(
            eq(settingsVersions.tenantId, input.tenantId),
            eq(settingsVersions.subject, 'target'),
            eq(settingsVersions.name, target.name),
            eq(settingsVersions.status, 'current'),
          ),
        );
      await tx.update(settingsVersions).set({ status: 'current', decidedAt: new Date() }).where(eq(settingsVersions.id, row.id));
      await tx
        .update(targets)
        .set({
          placeholders: proposal.placeholders,
          resolvedPlaceholders: proposal.resolved,
          connection: proposal.connection,
          settingsVersion: row.version,
          updatedAt: new Date(),
        })
        .where(eq(targets.id, target.id));
    });
  }
  const [current] = await db.select().from(targets).where(eq(targets.id, target.id));
  // A retried attempt finds the version current already: the rules still to put on the target are
  // the live ones not yet on this version that it shapes (every one for a mapping, else those with placeholders).
  const shaped =
    row.status === 'proposed'
      ? affected.map((a) => a.deployment_id)
      : (
          await db
            .select({ id: deployments.id, content: ruleVersions.content, settingsVersion: deployments.settingsVersion })
            .from(deployments)
            .innerJoin(
              ruleVersions,
              and(eq(ruleVersions.tenantId, deployments.tenantId), eq(ruleVersions.ruleId, deployments.ruleId), eq(ruleVersions.version, deployments.version)),
            )
            .where(and(eq(deployments.targetId, target.id), inArray(deployments.status, LIVE_DEPLOYMENT_STATUSES)))
        )
          .filter((d) => d.settingsVersion !== row.version && (row.mapping !== null || d.content.includes('expand')))
          .map((d) => d.id);
  const ids = shaped;
  const stale = ids.length
    ? await db
        .select({ id: deployments.id, ruleId: deployments.ruleId, version: deployments.version, content: ruleVersions.content, settingsVersion: deployments.settingsVersion })
        .from(deployments)
        .innerJoin(
          ruleVersions,
          and(eq(ruleVersions.tenantId, deployments.tenantId), eq(ruleVersions.ruleId, deployments.ruleId), eq(ruleVersions.version, deployments.version)),
        )
        .where(and(inArray(deployments.id, ids), inArray(deployments.status, LIVE_DEPLOYMENT_STATUSES)))
    : [];
  const redeployed: string[] = [];
  for (const d of stale) {
    const rule = compileRuleForTarget(siem, d.content, d.ruleId, d.version, current!);
    const adapter = targetAdapter(siem, current!);
    await adapter.deploy({ deploymentId: d.id, tenantId: input.tenantId, targetId: target.id, rule });
    // On the record as a deploy puts it: the settings version and the remote mapping it was compiled with.
    await db
      .update(deployments)
      .set({
        settingsVersion: row.version,
        ...(adapter.mapping ? { mapping: { name: adapter.mapping.name, version: adapter.mapping.version } } : {}),
        updatedAt: new Date(),
      })
      .where(eq(deployments.id, d.id));
    redeployed.push(d.id);
  }
  return { redeployed };
}

/** Ends a proposed settings version that was not approved (rejected, changes requested or expired): nothing else changes. */
export async function endSettingsProposal(db: Db, input: { tenantId: string; targetId: string; version: number }): Promise<void> {
  const [target] = await db.select({ name: targets.name }).from(targets).where(eq(targets.id, input.targetId));
  if (!target) return;
  await db
    .update(settingsVersions)
    .set({ status: 'rejected', decidedAt: new Date() })
    .where(
      and(
        eq(settingsVersions.tenantId, input.tenantId),
        eq(settingsVersions.subject, 'target'),
        eq(settingsVersions.name, target.name),
        eq(settingsVersions.version, input.version),
        eq(settingsVersions.status, 'proposed'),
      ),
    );
}

export type PlaceholdersChange = { outcome: 'applied'; settings: TargetPlaceholders } | Extract<SubmittedSettings, { outcome: 'pending' }>;

/**
 * Replaces a target's own placeholder values: at once (a new current version) when no live rule
 * on the target would compile differently, otherwise as a proposed version behind an approval.
 */
export async function changeTargetPlaceholders(deps: DomainDeps, auth: Actor, name: string, placeholders: Placeholders): Promise<PlaceholdersChange> {
  const { db } = deps.database;
  const row = await findTarget(db, auth, name);
  const current = await targetPlaceholders(db, auth, name);
  const submitted = await submitTargetSettings(deps, auth, row, { placeholders, mapping: null, environmentDefaults: current.environment_defaults }, {});
  if (submitted.outcome === 'pending') return submitted;
  await db.transaction((tx) => applyTargetPlaceholders(tx, auth, row, placeholders));
  return { outcome: 'applied', settings: await targetPlaceholders(db, auth, name) };
}

/**
 * Replaces an environment's default placeholder values. A change that would alter live rules on
 * one of its targets is refused (409) naming them: such a change is made per target, where it is
 * replayed and approved (a target's own values win over the defaults).
 */
export async function changeEnvironmentPlaceholders(deps: DomainDeps, auth: Actor, name: string, placeholders: Placeholders): Promise<EnvironmentPlaceholders> {
  const { db } = deps.database;
  const members = await db
    .select()
    .from(targets)
    .where(and(eq(targets.tenantId, auth.tenantId), eq(targets.environment, name)));
  const hit: string[] = [];
  for (const t of members) {
    const affected = await affectedDeployments(db, t, proposalOf(t, { placeholders: t.placeholders, mapping: null }, placeholders));
    hit.push(...affected.map((a) => `${a.rule_id} v${a.version} on ${t.name} (${a.reason})`));
  }
  if (hit.length) {
    throw conflict(
      `Live rules use defaults this change alters: ${hit.join('; ')}. Change the values on each such target (PUT /api/v1/settings/targets/{name}/placeholders), where the change is replayed and approved`,
    );
  }
  return setEnvironmentPlaceholders(db, auth, name, placeholders);
}

export type TargetReplacement =
  { outcome: 'applied'; target: TargetRow } | { outcome: 'pending'; target: TargetRow; change: Extract<SubmittedSettings, { outcome: 'pending' }> };

/**
 * Replaces a target's settings. A new field mapping under live rules becomes a proposed settings
 * version behind an approval (the other settings apply at once, the stored mapping kept until the
 * approval); without live rules it applies at once as a new settings version.
 */
export async function replaceTargetSettings(deps: DomainDeps, auth: Actor, name: string, settings: TargetSettings): Promise<TargetReplacement> {
  const { db } = deps.database;
  const row = await findTarget(db, auth, name);
  let same: boolean;
  try {
    same = sameMapping(row.kind, row.connection, settings.connection);
  } catch {
    same = true; // settings the kind refuses: replaceTarget answers 400 at their pointer
  }
  if (same) return { outcome: 'applied', target: await replaceTarget(deps, auth, name, settings) };
  const proposed = mappingSettingsOf(settings.connection);
  const current = await targetPlaceholders(db, auth, name);
  const submitted = await submitTargetSettings(deps, auth, row, { placeholders: row.placeholders, mapping: proposed, environmentDefaults: current.environment_defaults }, {});
  if (submitted.outcome === 'applied') {
    const updated = await replaceTarget(deps, auth, name, settings);
    const [bumped] = await db.transaction(async (tx) => {
      const out = await tx
        .update(targets)
        .set({ settingsVersion: sql`${targets.settingsVersion} + 1` })
        .where(eq(targets.id, updated.id))
        .returning();
      await recordSettingsVersion(tx, auth, { subject: 'target', name, version: out[0]!.settingsVersion, placeholders: updated.placeholders, mapping: proposed });
      return out;
    });
    return { outcome: 'applied', target: bumped! };
  }
  // Everything but the mapping now; the mapping when the approval is given.
  const kept: Record<string, unknown> = { ...settings.connection };
  delete kept.mapping;
  delete kept.field_map;
  Object.assign(kept, mappingSettingsOf(row.connection));
  const updated = await replaceTarget(deps, auth, name, { ...settings, connection: kept as TargetSettings['connection'] });
  return { outcome: 'pending', target: updated, change: submitted };
}
