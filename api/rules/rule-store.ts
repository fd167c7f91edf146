import crypto from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import { LineCounter, parseDocument } from 'yaml';
import type { Db } from '../../db/client';
import { ruleVersions, rules } from '../../db/schema';
import { badRequest, type FieldError } from '../http/problem';

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
 * The registry keys a rule by the Sigma rule's own `id`; this reads just what the registry indexes.
 * Full validation is the lint endpoint's job: storing a rule needs only that it is YAML with an id
 * and a title.
 */
export function readRuleMetadata(text: string): RuleMetadata {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false, lineCounter });
  const errors: FieldError[] = doc.errors.map((e) => {
    const at = lineCounter.linePos(e.pos[0]);
    return { pointer: '/body/rule', message: `${e.message.split('\n')[0]} (line ${at.line}, column ${at.col})` };
  });
  if (errors.length) throw badRequest('The rule is not valid YAML', errors);
  let value: unknown;
  try {
    // Aliases that expand without bound (a "billion laughs" document) stop here instead of eating memory.
    value = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    throw badRequest('The rule cannot be read as YAML', [{ pointer: '/body/rule', message: (err as Error).message }]);
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw badRequest('The rule must be a YAML mapping (a Sigma rule)', [{ pointer: '/body/rule', message: 'not a mapping' }]);
  }
  const rule = value as Record<string, unknown>;
  const problems: FieldError[] = [];
  if (typeof rule.id !== 'string' || !UUID.test(rule.id)) problems.push({ pointer: '/body/rule', message: 'the rule needs an `id` that is a UUID' });
  if (typeof rule.title !== 'string' || rule.title.trim() === '') problems.push({ pointer: '/body/rule', message: 'the rule needs a `title`' });
  if (problems.length) throw badRequest('The rule cannot be stored', problems);
  const logsource: Record<string, string> = {};
  if (rule.logsource && typeof rule.logsource === 'object') {
    for (const [k, v] of Object.entries(rule.logsource)) if (typeof v === 'string') logsource[k] = v;
  }
  return {
    ruleId: (rule.id as string).toLowerCase(),
    title: rule.title as string,
    level: typeof rule.level === 'string' ? rule.level : null,
    status: typeof rule.status === 'string' ? rule.status : null,
    tags: Array.isArray(rule.tags) ? rule.tags.filter((t): t is string => typeof t === 'string') : [],
    logsource,
  };
}

export type StoredVersion = { ruleId: string; version: number; created: boolean; createdAt: Date; contentSha256: string; title: string };

/** Stores the text as the rule's next version; the same text again returns the existing version. */
export async function storeRuleVersion(db: Db, tenantId: string, text: string, createdBy: string | null): Promise<StoredVersion> {
  const meta = readRuleMetadata(text);
  const sha = crypto.createHash('sha256').update(text).digest('hex');
  return db.transaction(async (tx) => {
    await tx
      .insert(rules)
      .values({ tenantId, ruleId: meta.ruleId, title: meta.title, latestVersion: 0 })
      .onConflictDoNothing();
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
