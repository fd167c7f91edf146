import {
  TARGETS,
  capabilitiesOf,
  convertRule,
  documentItems,
  isSigmaError,
  lintText,
  matchLogsource,
  placeholdersUsed,
  portability,
  withPlaceholderValues,
  toDuckDbSql,
  type Capabilities,
  type LintFinding,
  type Pipeline,
  type PlaceholderValues,
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
export function compileForTarget(rule: SigmaRule, kind: TargetKind, pipeline?: Pipeline): string {
  if (kind === 'local') return toDuckDbSql(rule);
  const target = TARGETS[kind];
  return convertRule(rule, target.backend, { pipeline: pipeline ?? target.pipeline });
}

/**
 * Lint as a CI gate sees it: the engine's findings, plus what this target adds — constructs it
 * cannot express (errors) and fields its field mapping does not know (warnings) — and the query
 * the target would run.
 */
export function lintForTarget(
  text: string,
  target: { name: string; kind: TargetKind; pipeline?: Pipeline },
  options: {
    /** The target's `|expand` placeholder values: with them, each placeholder a rule uses without a value is a finding of its own. */
    placeholders?: PlaceholderValues;
    /** Where a missing placeholder value is set, appended to its finding. */
    placeholderHint?: string;
  } = {},
): LintReport {
  const result = lintText(text);
  const findings: LintFinding[] = [...result.findings];
  const documents = result.documents.map((d) => d.document);
  const queries: LintReport['queries'] = [];
  for (const doc of documents) {
    if (doc.kind !== 'rule') continue;
    let query: string | null = null;
    let rule = doc;
    let missing = 0;
    if (options.placeholders) {
      const values = options.placeholders;
      const absent = placeholdersUsed(doc).filter((p) => !Object.hasOwn(values, p.name));
      missing = absent.length;
      for (const p of absent) {
        findings.push({
          code: 'placeholder_missing',
          severity: 'error',
          message: `placeholder %${p.name}% has no value on ${target.kind} target ${target.name}${options.placeholderHint ? `; ${options.placeholderHint}` : ''}`,
          line: p.line,
          column: p.column,
        });
      }
      if (missing === 0) rule = withPlaceholderValues(doc, values);
    }
    try {
      // Without every placeholder's value there is no query to show (the findings say which).
      if (missing === 0) query = compileForTarget(rule, target.kind, target.pipeline);
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

/**
 * What the target's mapping cannot place, as errors for that target: a logsource it has no source
 * for (the query would search everything, or nothing), and a field it neither renames nor declares
 * the logsource's own (a query naming a Sigma field the data does not have is valid and silently
 * matches nothing). A logsource whose raw field names are its data model (`unmapped: 'keep'` on
 * the logsource) places every field.
 */
function unmappedFields(rule: SigmaRule, target: { name: string; kind: TargetKind; pipeline?: Pipeline }): LintFinding[] {
  if (target.kind === 'local') return []; // the local store keeps every field of the raw event
  const pipeline = target.pipeline ?? TARGETS[target.kind].pipeline;
  const mapping = matchLogsource(rule.logsource, pipeline);
  const out: LintFinding[] = [];
  const ls = [rule.logsource.product, rule.logsource.category, rule.logsource.service].filter(Boolean).join('/') || 'without product, category or service';
  if (!mapping) {
    // No source at all is a compile error already (target_unsupported); a default source is this.
    if (pipeline.defaultTarget !== undefined) {
      out.push({
        code: 'target_logsource_unmapped',
        severity: 'error',
        message: `the ${pipeline.name} mapping of ${target.kind} target ${target.name} has no source for logsource ${ls}; the query would search ${pipeline.defaultTarget === '' ? 'every event of the target' : pipeline.defaultTarget}`,
        line: rule.logsource.pos.line,
        column: rule.logsource.pos.column,
      });
    }
    return out;
  }
  if (mapping.unmapped === 'keep') return out;
  const seen = new Set<string>();
  for (const { item } of documentItems(rule)) {
    const field = item.field;
    if (field === null || seen.has(field)) continue;
    seen.add(field);
    if (field in (mapping.fields ?? {}) || field in pipeline.fields) continue;
    out.push({
      code: 'target_field_unmapped',
      severity: 'error',
      message: `field ${field} has no place in the ${pipeline.name} mapping of ${target.kind} target ${target.name} for ${mapping.target}; add it to the target's field_map, or it would be queried under its Sigma name and match nothing`,
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
