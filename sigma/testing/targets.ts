import { SigmaError } from '../errors';
import type { CompileOptions } from '../evaluate';
import type { SigmaCorrelation, SigmaDocument, SigmaRule } from '../model';

/** What a rule test runs against: a rule, or a correlation over rules given in `documents`. */
export type TestTarget = SigmaRule | SigmaCorrelation;

export interface AnalysisOptions {
  /** Documents a correlation's `rules:` refer to (by id or name); chained correlations are followed. */
  readonly documents?: readonly SigmaDocument[];
  /** The options the in-process evaluator runs with (field mapping, placeholders, keyword fields…). */
  readonly compile?: CompileOptions;
}

export interface BaseRule {
  /** id, else name, else title: how findings and coverage items name the rule. */
  readonly label: string;
  readonly rule: SigmaRule;
}

export interface ResolvedTarget {
  /** The rules whose selections the fixtures exercise: the target itself, or a correlation's base rules. */
  readonly rules: readonly BaseRule[];
  /** The target and every correlation reached through it (empty for a plain rule). */
  readonly correlations: readonly SigmaCorrelation[];
}

export function documentLabel(doc: SigmaDocument): string {
  return doc.id ?? doc.name ?? doc.title;
}

/**
 * Resolves a correlation to the rules it counts, the same way the correlation engine does (id or
 * name, chained correlations followed). Throws `correlation-unresolved-rule` for a missing reference
 * and `correlation-invalid` for a cycle, as the engine would when the test runs.
 */
export function resolveTarget(target: TestTarget, documents: readonly SigmaDocument[] = []): ResolvedTarget {
  if (target.kind === 'rule') return { rules: [{ label: documentLabel(target), rule: target }], correlations: [] };
  const byKey = new Map<string, SigmaDocument>();
  for (const d of documents) for (const k of [d.id, d.name]) if (k !== undefined) byKey.set(k, d);
  const rules = new Map<SigmaRule, BaseRule>();
  const correlations: SigmaCorrelation[] = [];
  const visiting = new Set<SigmaCorrelation>();
  const visit = (corr: SigmaCorrelation): void => {
    if (visiting.has(corr)) throw new SigmaError('correlation-invalid', `correlation '${corr.title}' references itself`, corr.pos, corr.source);
    if (correlations.includes(corr)) return;
    visiting.add(corr);
    correlations.push(corr);
    for (const written of corr.rules) {
      const doc = byKey.get(written);
      if (!doc || doc.kind === 'filter') {
        throw new SigmaError(
          'correlation-unresolved-rule',
          `correlation '${corr.title}' references unknown rule '${written}'`,
          corr.positions.correlation ?? corr.pos,
          corr.source,
        );
      }
      if (doc.kind === 'correlation') visit(doc);
      else if (!rules.has(doc)) rules.set(doc, { label: documentLabel(doc), rule: doc });
    }
    visiting.delete(corr);
  };
  visit(target);
  return { rules: [...rules.values()], correlations };
}
