import crypto from 'node:crypto';
import { and, count, eq, sql } from 'drizzle-orm';
import { parseSigma } from '../../sigma';
import type { Db } from '../../db/client';
import { ruleVersions, rules, tenants } from '../../db/schema';
import { badRequest, resourceLimit, type FieldError } from '../http/problem';
import { findUnstorableText } from '../../db/storable-text';

export type RuleMetadata = {
  ruleId: string;
  title: string;
  level: string | null;
  status: string | null;
  tags: string[];
  logsource: Record<string, string>;
};

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The registry keys a file by the Sigma rule's own `id`: the correlation's when the file holds one
 * (its base rules travel with it), else the first document's. Storing needs only that the text is
 * Sigma with an id and a title; whether the rule is any good is what lint reports.
 */
export function readRuleMetadata(text: string): RuleMetadata {
  const collection = parseSigma(text);
  const structural = collection.errors.filter((e) => e.code.startsWith('yaml') || e.code === 'document-not-map');
  if (structural.length || collection.documents.length === 0) {
    const errors = (structural.length ? structural : collection.errors).slice(0, 20).map((e) => ({ pointer: '/body/rule', message: `${e.message} (line ${e.line}, column ${e.column})` }));
    throw badRequest('The rule is not a Sigma YAML document', errors.length ? errors : [{ pointer: '/body/rule', message: 'no document found' }]);
  }
  const main = collection.documents.find((d) => d.kind === 'correlation') ?? collection.documents[0]!;
  const problems: FieldError[] = [];
  if (typeof main.id !== 'string' || !UUID.test(main.id)) problems.push({ pointer: '/body/rule', message: 'the rule needs an `id` that is a UUID' });
  if (!main.title || main.title.trim() === '') problems.push({ pointer: '/body/rule', message: 'the rule needs a `title`' });
  if (problems.length) throw badRequest('The rule cannot be stored', problems);
  const logsource: Record<string, string> = {};
  const source = 'logsource' in main ? main.logsource : undefined;
  for (const [k, v] of Object.entries(source ?? {})) if (typeof v === 'string') logsource[k] = v;
  const meta: RuleMetadata = {
    ruleId: main.id!.toLowerCase(),
    title: main.title,
    level: main.level ?? null,
    status: main.status ?? null,
    tags: [...main.tags],
    logsource,
  };
  // YAML escapes ("\0", "\ud800") decode to text the registry's columns cannot hold.
  const unstorable = findUnstorableText(meta);
  if (unstorable) throw badRequest('The rule cannot be stored', [{ pointer: '/body/rule', message: `its ${unstorable.pointer.slice(1).replace(/\/\d+$/, '')} ${unstorable.reason}` }]);
  return meta;
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
