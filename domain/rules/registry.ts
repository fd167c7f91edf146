import { and, asc, desc, eq, gt, lt, sql } from 'drizzle-orm';
import { ruleTextDiff } from '../../sigma';
import type { Db } from '../../db/client';
import { ruleVersions, rules } from '../../db/schema';
import { notFound } from '../errors';
import type { Actor } from '../tenants/actor';
import { checkRuleSize, limitsOf } from '../tenants/resource-limits';
import { storeRuleVersion, type StoredVersion } from './rule-store';
import type { LatestRuleReader, LatestRuleRow } from './latest-rule-reader';

/** The rule registry: immutable versions keyed by the Sigma rule's own id, per tenant. Rule ids are case-insensitive. */

export type RuleRecord = typeof rules.$inferSelect;
export type RuleVersionRecord = typeof ruleVersions.$inferSelect;

/** Filters of the rule list, each on the rule's latest version. */
export type RuleFilter = {
  tag?: string | undefined;
  level?: string | undefined;
  status?: string | undefined;
  product?: string | undefined;
  category?: string | undefined;
  service?: string | undefined;
};

/** A page of a keyset-ordered list: `next` is the key to continue after, when there is more. */
export type Page<T, K> = { items: T[]; next: K | undefined };

const latestJoin = and(eq(ruleVersions.tenantId, rules.tenantId), eq(ruleVersions.ruleId, rules.ruleId), eq(ruleVersions.version, rules.latestVersion));

/** Stores the text as the rule's next version (or finds the same text's), within the actor's tier: rule size and number of rules. */
export async function storeRule(db: Db, actor: Actor, text: string): Promise<StoredVersion> {
  checkRuleSize(actor, text);
  return storeRuleVersion(db, actor.tenantId, text, actor.tokenId, limitsOf(actor).rules);
}

/** Rules with their latest versions, ordered by rule id, after the rule id `after`. */
export async function listRules(
  db: Db,
  tenantId: string,
  filter: RuleFilter,
  page: { limit: number; after: string | undefined },
): Promise<Page<{ rule: RuleRecord; latest: RuleVersionRecord }, string>> {
  const { after, limit } = page;
  const rows = await db
    .select({ rule: rules, latest: ruleVersions })
    .from(rules)
    .innerJoin(ruleVersions, latestJoin)
    .where(
      and(
        eq(rules.tenantId, tenantId),
        after !== undefined ? gt(rules.ruleId, after) : undefined,
        filter.tag !== undefined ? sql`${ruleVersions.tags} @> ${JSON.stringify([filter.tag])}::jsonb` : undefined,
        filter.level !== undefined ? eq(ruleVersions.level, filter.level) : undefined,
        filter.status !== undefined ? eq(ruleVersions.status, filter.status) : undefined,
        filter.product !== undefined ? sql`${ruleVersions.logsource} ->> 'product' = ${filter.product}` : undefined,
        filter.category !== undefined ? sql`${ruleVersions.logsource} ->> 'category' = ${filter.category}` : undefined,
        filter.service !== undefined ? sql`${ruleVersions.logsource} ->> 'service' = ${filter.service}` : undefined,
      ),
    )
    .orderBy(asc(rules.ruleId))
    .limit(limit + 1);
  const items = rows.slice(0, limit);
  return { items, next: rows.length > limit ? items.at(-1)!.rule.ruleId : undefined };
}

/** The tenant's rule (the registry's row: its id, title and latest version); 404 when it has none by that id. */
export async function findRule(db: Db, tenantId: string, id: string) {
  const [rule] = await db
    .select()
    .from(rules)
    .where(and(eq(rules.tenantId, tenantId), eq(rules.ruleId, id.toLowerCase())));
  if (!rule) throw notFound(`No rule ${id} in this tenant`);
  return rule;
}

/** A rule with its latest version and text. */
export async function getRule(latestRules: LatestRuleReader, tenantId: string, id: string): Promise<LatestRuleRow> {
  const row = await latestRules.read(tenantId, id.toLowerCase());
  if (!row) throw notFound(`No rule ${id} in this tenant`);
  return row;
}

/** The latest version number of a rule of the tenant; 404 when there is no such rule. */
export async function latestVersionOf(db: Db, tenantId: string, id: string): Promise<number> {
  const ruleId = id.toLowerCase();
  const [row] = await db
    .select({ latest: rules.latestVersion })
    .from(rules)
    .where(and(eq(rules.tenantId, tenantId), eq(rules.ruleId, ruleId)));
  if (!row) throw notFound(`No rule ${ruleId} in this tenant`);
  return row.latest;
}

/**
 * A rule's versions, newest first, below the version `before`. The rule is not looked up here: the
 * caller checks that it exists first (`latestVersionOf`), so an unknown rule is a 404, not an empty page.
 */
export async function listVersions(db: Db, tenantId: string, id: string, page: { limit: number; before: number | undefined }): Promise<Page<RuleVersionRecord, number>> {
  const { before, limit } = page;
  const rows = await db
    .select()
    .from(ruleVersions)
    .where(and(eq(ruleVersions.tenantId, tenantId), eq(ruleVersions.ruleId, id.toLowerCase()), before !== undefined ? lt(ruleVersions.version, before) : undefined))
    .orderBy(desc(ruleVersions.version))
    .limit(limit + 1);
  const items = rows.slice(0, limit);
  return { items, next: rows.length > limit ? items.at(-1)!.version : undefined };
}

async function versionOf(db: Db, tenantId: string, ruleId: string, version: number): Promise<RuleVersionRecord | undefined> {
  const [row] = await db
    .select()
    .from(ruleVersions)
    .where(and(eq(ruleVersions.tenantId, tenantId), eq(ruleVersions.ruleId, ruleId), eq(ruleVersions.version, version)));
  return row;
}

/** One version of a rule, with its text. */
export async function getVersion(db: Db, tenantId: string, id: string, version: number): Promise<RuleVersionRecord> {
  const ruleId = id.toLowerCase();
  const v = await versionOf(db, tenantId, ruleId, version);
  if (!v) throw notFound(`No version ${version} of rule ${ruleId} in this tenant`);
  return v;
}

export type VersionDiff = { ruleId: string; from: number; to: number; diff: string; changed: boolean };

/** A unified diff from version `from` to version `to` (the latest when undefined) of a rule. */
export async function diffVersions(db: Db, tenantId: string, id: string, from: number, to: number | undefined): Promise<VersionDiff> {
  const ruleId = id.toLowerCase();
  const latest = await latestVersionOf(db, tenantId, ruleId);
  const newer = to ?? latest;
  const [a, b] = await Promise.all([versionOf(db, tenantId, ruleId, from), versionOf(db, tenantId, ruleId, newer)]);
  if (!a) throw notFound(`No version ${from} of rule ${ruleId}`);
  if (!b) throw notFound(`No version ${newer} of rule ${ruleId}`);
  return { ruleId, from: a.version, to: b.version, diff: ruleTextDiff(ruleId, a, b), changed: a.contentSha256 !== b.contentSha256 };
}
