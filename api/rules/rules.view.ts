import type { StoredVersion } from '../../domain/rules/rule-store';
import type { LatestRuleRow } from '../../domain/rules/latest-rule-reader';
import type { RuleRecord, RuleVersionRecord, VersionDiff } from '../../domain/rules/registry';

/** How the API shows the registry's records: rules, versions, diffs. */

export function storedVersionView(stored: StoredVersion) {
  return {
    rule_id: stored.ruleId,
    version: stored.version,
    title: stored.title,
    content_sha256: stored.contentSha256,
    created: stored.created,
    created_at: stored.createdAt.toISOString(),
  };
}

export function ruleSummaryView(r: RuleRecord, v: RuleVersionRecord) {
  return {
    rule_id: r.ruleId,
    title: r.title,
    latest_version: r.latestVersion,
    level: v.level,
    status: v.status,
    tags: v.tags,
    logsource: v.logsource,
    created_at: r.createdAt.toISOString(),
    updated_at: r.updatedAt.toISOString(),
  };
}

export function ruleView(row: LatestRuleRow) {
  const iso = (v: Date | string) => new Date(v).toISOString();
  return {
    rule_id: row.rule_id,
    title: row.title,
    latest_version: row.latest_version,
    level: row.level,
    status: row.status,
    tags: row.tags,
    logsource: row.logsource,
    created_at: iso(row.created_at),
    updated_at: iso(row.updated_at),
    content: row.content,
  };
}

export function versionInfoView(v: RuleVersionRecord) {
  return {
    rule_id: v.ruleId,
    version: v.version,
    title: v.title,
    content_sha256: v.contentSha256,
    level: v.level,
    status: v.status,
    created_by: v.createdBy,
    created_at: v.createdAt.toISOString(),
  };
}

export function versionDetailView(v: RuleVersionRecord) {
  return { ...versionInfoView(v), content: v.content };
}

export function diffView(d: VersionDiff) {
  return { rule_id: d.ruleId, from: d.from, to: d.to, diff: d.diff, changed: d.changed };
}
