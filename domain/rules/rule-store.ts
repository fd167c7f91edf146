import crypto from 'node:crypto';
import { and, count, eq, sql } from 'drizzle-orm';
import { identityFieldOf, readRuleIdentity, type RuleIdentity } from '../../sigma/rule-identity';
import type { Db } from '../../db/client';
import { ruleVersions, rules, tenants } from '../../db/schema';
import { invalidRequest, resourceLimit } from '../errors';
import { findUnstorableText } from '../../lib/storable-text';

export type RuleMetadata = RuleIdentity;

/** The rule's identity as the registry stores it (see `readRuleIdentity`), or a 400 saying why it cannot be. */
export function readRuleMetadata(text: string): RuleMetadata {
  const read = readRuleIdentity(text);
  if (!read.ok)
    throw invalidRequest(
      read.title,
      read.details.map((message) => ({ pointer: '/body/rule', message })),
    );
  // YAML escapes ("\0", "\ud800") decode to text the registry's columns cannot hold.
  const unstorable = findUnstorableText(read.identity);
  if (unstorable) throw invalidRequest('The rule cannot be stored', [{ pointer: '/body/rule', message: `its ${identityFieldOf(unstorable.pointer)} ${unstorable.reason}` }]);
  return read.identity;
}

export type StoredVersion = { ruleId: string; version: number; created: boolean; createdAt: Date; contentSha256: string; title: string };

/**
 * Stores the text as the rule's next version; the same text again returns the existing version.
 * `maxRules` (the tier's) bounds how many rules the tenant holds: a new rule beyond it is refused
 * with 403 `resource-limit`, a new version of an existing rule never is.
 */
export async function storeRuleVersion(db: Db, tenantId: string, text: string, createdBy: string | null, maxRules: number | null = null): Promise<StoredVersion> {
  const meta = readRuleMetadata(text);
  const sha = crypto.createHash('sha256').update(text).digest('hex');
  return db.transaction(async (tx) => {
    const created = await tx
      .insert(rules)
      .values({ tenantId, ruleId: meta.ruleId, title: meta.title, latestVersion: 0 })
      .onConflictDoNothing()
      .returning({ ruleId: rules.ruleId });
    if (created.length > 0 && maxRules !== null) {
      // New rules of one tenant are counted one at a time (the tenant row is locked), after the
      // insert: the insert of this one is undone when it is one too many. NO KEY UPDATE, since the
      // inserts' foreign keys hold KEY SHARE on the same row: FOR UPDATE would deadlock with them.
      await tx.select({ id: tenants.id }).from(tenants).where(eq(tenants.id, tenantId)).for('no key update');
      const [{ n }] = (await tx.select({ n: count() }).from(rules).where(eq(rules.tenantId, tenantId))) as [{ n: number }];
      if (Number(n) > maxRules) throw resourceLimit(`The tenant holds ${Number(n) - 1} rules; its tier allows ${maxRules}`);
    }
    // Locking the rule row serialises concurrent pushes of the same rule, so versions stay gapless.
    const [current] = await tx
      .select()
      .from(rules)
      .where(and(eq(rules.tenantId, tenantId), eq(rules.ruleId, meta.ruleId)))
      .for('update');
    const [existing] = await tx
      .select()
      .from(ruleVersions)
      .where(and(eq(ruleVersions.tenantId, tenantId), eq(ruleVersions.ruleId, meta.ruleId), eq(ruleVersions.contentSha256, sha)));
    if (existing) {
      return { ruleId: meta.ruleId, version: existing.version, created: false, createdAt: existing.createdAt, contentSha256: sha, title: existing.title };
    }
    const version = current!.latestVersion + 1;
    const [row] = await tx
      .insert(ruleVersions)
      .values({
        tenantId,
        ruleId: meta.ruleId,
        version,
        content: text,
        contentSha256: sha,
        title: meta.title,
        level: meta.level,
        status: meta.status,
        tags: meta.tags,
        logsource: meta.logsource,
        createdBy,
      })
      .returning();
    await tx
      .update(rules)
      .set({ latestVersion: version, title: meta.title, updatedAt: sql`now()` })
      .where(and(eq(rules.tenantId, tenantId), eq(rules.ruleId, meta.ruleId)));
    return { ruleId: meta.ruleId, version, created: true, createdAt: row!.createdAt, contentSha256: sha, title: meta.title };
  });
}
