import {
  TARGETS,
  capabilitiesOf,
  convertRule,
  documentItems,
  isSigmaError,
  lintText,
  matchLogsource,
  portability,
  toDuckDbSql,
  type Capabilities,
  type LintFinding,
  type SigmaDocument,
  type SigmaRule,
  type TargetKind,
} from '..';

export const TARGET_KINDS: readonly TargetKind[] = ['local', 'splunk', 'elastic', 'sentinel'];

export type LintReport = {
  valid: boolean;
  findings: LintFinding[];
  counts: { error: number; warning: number; info: number };
  capabilities: Record<string, boolean>;
  portability_score: number;
  portability: Record<TargetKind, { expressible: boolean; reasons: string[] }>;
  target: { name: string; kind: TargetKind };
  query: string | null;
  queries: Array<{ id: string | null; title: string; query: string | null }>;
};

/** The query a target of this kind runs for the rule; throws a SigmaError with the position of what it cannot express. */
export function compileForTarget(rule: SigmaRule, kind: TargetKind): string {
  if (kind === 'local') return toDuckDbSql(rule);
  const { backend, pipeline } = TARGETS[kind];
  return convertRule(rule, backend, { pipeline });
}

/**
 * Lint as a CI gate sees it: the engine's findings, plus what this target adds — constructs it
 * cannot express (errors) and fields its field mapping does not know (warnings) — and the query
 * the target would run.
 */
export function lintForTarget(text: string, target: { name: string; kind: TargetKind }): LintReport {
  const result = lintText(text);
  const findings: LintFinding[] = [...result.findings];
  const documents = result.documents.map((d) => d.document);
  const queries: LintReport['queries'] = [];
  for (const doc of documents) {
    if (doc.kind !== 'rule') continue;
    let query: string | null = null;
    try {
      query = compileForTarget(doc, target.kind);
    } catch (err) {
      if (!isSigmaError(err)) throw err;
      findings.push({
        code: 'target_unsupported',
        severity: 'error',
        message: `${target.kind} target ${target.name} cannot express this exactly: ${err.message}`,
        line: err.line,
        column: err.column,
      });
    }
    findings.push(...unmappedFields(doc, target));
    queries.push({ id: doc.id ?? null, title: doc.title, query });
  }
  findings.sort((a, b) => a.line - b.line || a.column - b.column);
  const counts = { error: 0, warning: 0, info: 0 };
  for (const f of findings) counts[f.severity]++;
  const { score, targets } = combinedPortability(documents);
  return {
    valid: counts.error === 0,
    findings,
    counts,
    capabilities: combinedCapabilities(documents),
    portability_score: score,
    portability: targets,
    target,
    query: queries[0]?.query ?? null,
    queries,
  };
}

function unmappedFields(rule: SigmaRule, target: { name: string; kind: TargetKind }): LintFinding[] {
  if (target.kind === 'local') return []; // the local store keeps every field of the raw event
  const pipeline = TARGETS[target.kind].pipeline;
  const logsourceFields = matchLogsource(rule.logsource, pipeline)?.fields ?? {};
  const seen = new Set<string>();
  const out: LintFinding[] = [];
  for (const { item } of documentItems(rule)) {
    const field = item.field;
    if (field === null || seen.has(field)) continue;
    seen.add(field);
    if (field in logsourceFields || field in pipeline.fields) continue;
    out.push({
      code: 'target_field_unmapped',
      severity: 'warning',
      message: `field ${field} has no mapping in the ${pipeline.name} pipeline of ${target.kind} target ${target.name}; it is queried under its Sigma name`,
      line: item.pos.line,
      column: item.pos.column,
    });
  }
  return out;
}

function combinedCapabilities(documents: SigmaDocument[]): Record<string, boolean> {
  const merged: Partial<Capabilities> = {};
  for (const doc of documents) {
    for (const [k, v] of Object.entries(capabilitiesOf(doc)) as Array<[keyof Capabilities, boolean]>) merged[k] = (merged[k] ?? false) || v;
  }
  return merged as Record<string, boolean>;
}

/** A file is portable to a target kind only if every document in it is. */
function combinedPortability(documents: SigmaDocument[]): { score: number; targets: LintReport['portability'] } {
  const targets = Object.fromEntries(TARGET_KINDS.map((k) => [k, { expressible: documents.length > 0, reasons: [] as string[] }])) as LintReport['portability'];
  for (const doc of documents) {
    const p = portability(doc);
    for (const kind of TARGET_KINDS) {
      if (!p.targets[kind].expressible) {
        targets[kind].expressible = false;
        targets[kind].reasons.push(...p.targets[kind].reasons);
      }
    }
  }
  if (documents.length === 0) for (const kind of TARGET_KINDS) targets[kind].reasons.push('the text holds no Sigma document that parses');
  const score = TARGET_KINDS.filter((k) => targets[k].expressible).length / TARGET_KINDS.length;
  return { score, targets };
}
