import type { LintFinding } from '../lint';
import type { Coverage } from './coverage';
import { nearDuplicates } from './duplicates';
import { eventFieldPaths, fieldsRead, isFieldRead } from './fields';
import type { Fixture } from './fixtures';
import { resolveTarget, type AnalysisOptions, type TestTarget } from './targets';
import { untestableCategoriesFor, type UntestableCategory } from './untestable';

/**
 * Quality of a rule's test suite: what the fixtures fail to show even when every test passes.
 * Codes are stable; the API returns them as they are.
 */
export type QualityCode =
  | 'no_negative_tests'
  | 'no_positive_tests'
  | 'uncovered_selection'
  | 'fixture_reaches_no_selection'
  | 'fixture_fields_unused'
  | 'near_duplicate_fixtures'
  | 'untestable_lint_findings';

export interface QualityFinding {
  readonly code: QualityCode;
  readonly severity: 'warning' | 'info';
  readonly message: string;
  /** The fixture concerned; for near duplicates, the later of the two. */
  readonly fixture?: string;
  /** near_duplicate_fixtures: the earlier fixture `fixture` duplicates. */
  readonly other_fixture?: string;
  /** uncovered_selection: the search identifier. */
  readonly selection?: string;
  /** uncovered_selection of a correlation target: the base rule (id, else name, else title). */
  readonly rule?: string;
  /** fixture_fields_unused: the unread field paths, sorted. */
  readonly fields?: string[];
  /** untestable_lint_findings: the lint code passed through, with its line. */
  readonly lint_code?: string;
  readonly line?: number;
}

function suiteFindings(fixtures: readonly Fixture[]): QualityFinding[] {
  const out: QualityFinding[] = [];
  if (!fixtures.some((f) => f.expect === 'no_match')) {
    out.push({ code: 'no_negative_tests', severity: 'warning', message: 'no fixture expects no_match, so nothing shows the rule stays quiet on benign look-alikes' });
  }
  if (!fixtures.some((f) => f.expect === 'match')) {
    out.push({ code: 'no_positive_tests', severity: 'warning', message: 'no fixture expects match, so nothing shows the rule detects anything' });
  }
  return out;
}

function uncoveredSelections(target: TestTarget, coverage: Coverage): QualityFinding[] {
  return coverage.selections.items
    .filter((s) => !s.covered)
    .map((s) => ({
      code: 'uncovered_selection' as const,
      severity: 'warning' as const,
      message: `no fixture event satisfies selection '${s.name}'${target.kind === 'correlation' ? ` of rule '${s.rule}'` : ''}`,
      selection: s.name,
      ...(target.kind === 'correlation' ? { rule: s.rule } : {}),
    }));
}

function unreachingFixtures(fixtures: readonly Fixture[], coverage: Coverage): QualityFinding[] {
  const reaching = new Set(coverage.selections.items.flatMap((s) => s.by));
  return fixtures
    .filter((f) => !reaching.has(f.name))
    .map((f) => ({
      code: 'fixture_reaches_no_selection' as const,
      severity: 'warning' as const,
      message:
        f.expect === 'no_match'
          ? `fixture '${f.name}' satisfies no selection, so it only shows that an unrelated event does not match; make it a near miss`
          : `fixture '${f.name}' satisfies no selection, so it cannot match`,
      fixture: f.name,
    }));
}

function lintPassThrough(lintFindings: readonly LintFinding[], categoryOf: (code: string) => UntestableCategory | undefined): QualityFinding[] {
  const out: QualityFinding[] = [];
  for (const f of lintFindings) {
    const category = categoryOf(f.code);
    if (category === undefined) continue;
    out.push({
      code: 'untestable_lint_findings',
      severity: f.severity === 'info' ? 'info' : 'warning',
      message: `${f.code} (${category}, line ${f.line}): ${f.message}; no fixture can catch this`,
      lint_code: f.code,
      line: f.line,
    });
  }
  return out;
}

/**
 * Findings about the fixtures of one rule (or correlation, with its base rules in
 * `options.documents`), given their coverage and the rule's lint findings. Order: suite-wide,
 * uncovered selections, per fixture, near duplicates, then lint pass-through.
 */
export function analyseQuality(
  target: TestTarget,
  fixtures: readonly Fixture[],
  coverage: Coverage,
  lintFindings: readonly LintFinding[],
  options: AnalysisOptions = {},
): QualityFinding[] {
  const read = fieldsRead(resolveTarget(target, options.documents), options.compile);
  const out: QualityFinding[] = [...suiteFindings(fixtures), ...uncoveredSelections(target, coverage), ...unreachingFixtures(fixtures, coverage)];
  for (const f of fixtures) {
    const unused = [...new Set(f.events.flatMap((e) => eventFieldPaths(e)))].filter((p) => !isFieldRead(p, read)).sort();
    if (unused.length === 0) continue;
    out.push({
      code: 'fixture_fields_unused',
      severity: 'info',
      message: `fixture '${f.name}' sets fields the rule never reads: ${unused.join(', ')}`,
      fixture: f.name,
      fields: unused,
    });
  }
  for (const { first, second, identical } of nearDuplicates(fixtures, read)) {
    const how = identical ? 'has the same events as' : 'differs only in fields the rule does not read or in letter case from';
    const conflicting = first.expect !== second.expect;
    out.push({
      code: 'near_duplicate_fixtures',
      severity: conflicting ? 'warning' : 'info',
      message: `fixture '${second.name}' ${how} '${first.name}'${conflicting ? '; they expect different verdicts, so one of them must fail' : '; it tests nothing new'}`,
      fixture: second.name,
      other_fixture: first.name,
    });
  }
  return [...out, ...lintPassThrough(lintFindings, untestableCategoriesFor(target))];
}
