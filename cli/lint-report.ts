import type { LintFinding } from '../sigma';
import { junitXml, type JUnitCase } from './junit';
import type { FileLint } from './lint';
import type { Renderable } from './report-output';

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The compiler convention editors and CI logs link from: file:line:column: severity [code] message. */
export function findingLine(file: string, f: Pick<LintFinding, 'line' | 'column' | 'severity' | 'code' | 'message'>): string {
  return `${file}:${f.line}:${f.column}: ${f.severity} [${f.code}] ${f.message}`;
}

export function lintFailed(results: readonly FileLint[]): boolean {
  return results.some((r) => !r.ok || r.report.counts.error > 0);
}

export function lintReport(results: readonly FileLint[], target: string, now = new Date()): Renderable {
  const totals = { error: 0, warning: 0, info: 0 };
  for (const r of results) if (r.ok) for (const k of ['error', 'warning', 'info'] as const) totals[k] += r.report.counts[k];
  const failedFiles = results.filter((r) => !r.ok || r.report.counts.error > 0).length;
  const summary = () =>
    `lint (${target}): ${plural(results.length, 'file')}, ${plural(totals.error, 'error')}, ${plural(totals.warning, 'warning')}, ${totals.info} info — ` +
    (failedFiles === 0 ? 'passed' : `${plural(failedFiles, 'file')} failed`);

  return {
    summary,
    text: () => {
      const lines: string[] = [];
      for (const r of results) {
        if (r.ok) lines.push(...r.report.findings.map((f) => findingLine(r.file, f)));
        else lines.push(`${r.file}: error [rejected] ${r.error}`);
      }
      return [...lines, summary()].join('\n') + '\n';
    },
    json: () => ({
      target,
      passed: failedFiles === 0,
      counts: totals,
      results: results.map((r) => (r.ok ? { file: r.file, ...r.report } : { file: r.file, error: r.error })),
    }),
    junit: () =>
      junitXml(
        `detflow lint (${target})`,
        results.map((r) => ({ name: r.file, seconds: r.seconds, timestamp: now, cases: [lintCase(r, target)] })),
      ),
  };
}

function lintCase(r: FileLint, target: string): JUnitCase {
  const base = { name: r.file, classname: `lint.${target}`, file: r.file, seconds: r.seconds };
  if (!r.ok) return { ...base, error: { message: r.error.split('\n')[0]!, type: 'rejected', body: r.error } };
  const errors = r.report.findings.filter((f) => f.severity === 'error');
  const others = r.report.findings.filter((f) => f.severity !== 'error');
  return {
    ...base,
    ...(errors.length > 0 ? { failure: { message: plural(errors.length, 'lint error'), type: 'lint', body: errors.map((f) => findingLine(r.file, f)).join('\n') } } : {}),
    ...(others.length > 0 ? { systemOut: others.map((f) => findingLine(r.file, f)).join('\n') } : {}),
  };
}
