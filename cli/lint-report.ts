import type { LintFinding } from '../sigma';
import { junitXml, type JUnitCase } from './junit';
import type { FileLint } from './lint';
import { lintSarif, sarifRoot } from './lint-sarif';
import { mdCode, mdDetails, mdTable, mdText } from './markdown';
import type { Renderable } from './report-output';

export const LINT_FORMATS = ['text', 'json', 'junit', 'markdown', 'sarif'] as const;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The compiler convention editors and CI logs link from: file:line:column: severity [code] message. */
export function findingLine(file: string, f: Pick<LintFinding, 'line' | 'column' | 'severity' | 'code' | 'message'>): string {
  return `${file}:${f.line}:${f.column}: ${f.severity} [${f.code}] ${f.message}`;
}

export function lintFailed(results: readonly FileLint[]): boolean {
  return results.some((r) => !r.ok || r.report.counts.error > 0);
}

/**
 * @param options.root the folder SARIF paths are relative to (default: the git work tree around
 *   the working directory); `now` stamps the JUnit suites.
 */
export function lintReport(results: readonly FileLint[], target: string, options: { now?: Date; root?: string } = {}): Renderable<(typeof LINT_FORMATS)[number]> {
  const now = options.now ?? new Date();
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
    markdown: () => lintMarkdown(results, target, totals, failedFiles),
    sarif: () => lintSarif(results, target, options.root ?? sarifRoot(process.cwd())),
  };
}

const SEVERITY_RANK = { error: 0, warning: 1, info: 2 } as const;

type Row = { file: string; line: number; column: number; severity: LintFinding['severity']; code: string; message: string };

const findingColumns = [
  { header: 'File', cell: (f: Row) => mdCode(f.file) },
  { header: 'Line', align: 'right' as const, cell: (f: Row) => (f.line >= 1 ? `${f.line}:${f.column}` : '') },
  { header: 'Severity', cell: (f: Row) => f.severity },
  { header: 'Code', cell: (f: Row) => mdCode(f.code) },
  { header: 'Message', cell: (f: Row) => mdText(f.message) },
];

/** For a job summary or a merge-request note: counts, then failed files and errors first, info folded away. */
function lintMarkdown(results: readonly FileLint[], target: string, totals: { error: number; warning: number; info: number }, failedFiles: number): string {
  const verdict = failedFiles === 0 ? '✅ passed' : `❌ ${plural(failedFiles, 'file')} failed`;
  const parts = [
    `### detflow lint (${mdText(target)}): ${verdict}\n`,
    mdTable(
      [
        { header: 'Files', align: 'right', cell: () => String(results.length) },
        { header: 'Failed', align: 'right', cell: () => String(failedFiles) },
        { header: 'Errors', align: 'right', cell: () => String(totals.error) },
        { header: 'Warnings', align: 'right', cell: () => String(totals.warning) },
        { header: 'Info', align: 'right', cell: () => String(totals.info) },
      ],
      [null],
    ),
  ];
  const rejected = results.filter((r): r is Extract<FileLint, { ok: false }> => !r.ok);
  if (rejected.length > 0) {
    parts.push(
      '#### Refused by the service\n',
      mdTable(
        [
          { header: 'File', cell: (r: (typeof rejected)[number]) => mdCode(r.file) },
          { header: 'Reason', cell: (r: (typeof rejected)[number]) => mdText(r.error) },
        ],
        rejected,
      ),
    );
  }
  const rows: Row[] = results
    .flatMap((r) => (r.ok ? r.report.findings.map((f) => ({ file: r.file, line: f.line, column: f.column, severity: f.severity, code: f.code, message: f.message })) : []))
    .sort((a, b) => SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] || a.file.localeCompare(b.file) || a.line - b.line || a.column - b.column);
  const shown = rows.filter((f) => f.severity !== 'info');
  const info = rows.filter((f) => f.severity === 'info');
  if (shown.length > 0) parts.push('#### Errors and warnings\n', mdTable(findingColumns, shown));
  if (info.length > 0) parts.push(mdDetails(`${info.length} info finding${info.length === 1 ? '' : 's'}`, mdTable(findingColumns, info)));
  return parts.join('\n');
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
