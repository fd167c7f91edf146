/**
 * Markdown for the places CI shows it: a GitHub job summary ($GITHUB_STEP_SUMMARY) and a GitLab
 * merge-request note. Both render GitHub-flavoured Markdown with inline HTML, so anything taken
 * from a rule, a file name or the service is escaped before it reaches a table.
 */

/**
 * The punctuation that means something inside a line of Markdown: emphasis, code, links and
 * images (`[`, `]`), tables (`|`), strikethrough, and the escape itself. What matters only at the
 * start of a line (`#`, `-`, `1.`) cannot start one here: a cell or heading is never a line start.
 */
const MARKDOWN_PUNCTUATION = /[\\`*_[\]|~]/g;

/**
 * Text shown as text: HTML is neutralised (`<script>` stays visible, `&lt;` stays `&lt;`),
 * Markdown punctuation is backslash-escaped, a line break becomes `<br>` (a table row is one line),
 * and an `@` before a word gets a zero-width space so `@timestamp` in a message does not notify a
 * user of that name (what Dependabot does in its pull requests).
 */
export function mdText(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(MARKDOWN_PUNCTUATION, (c) => `\\${c}`)
    .replace(/@(?=\w)/g, '@&#8203;')
    .replace(/\r\n|\r|\n/g, '<br>');
}

/**
 * An identifier, a path or a query as code. Not a backtick code span: inside one nothing can be
 * escaped, and a table splits its row at a `|` (even inside code) unless a backslash precedes it,
 * which a Windows path ending in a backslash before a `|` defeats. Escaped text in an HTML
 * `<code>` element (allowed by GitHub and GitLab) has no such corner.
 */
export function mdCode(text: string): string {
  return `<code>${mdText(text)}</code>`;
}

export type Align = 'left' | 'right';

export type Column<Row> = { header: string; align?: Align; cell: (row: Row) => string };

/**
 * A table of rows whose cells are already Markdown (built with mdText/mdCode). At most `limit`
 * rows, then a line saying how many were left out: a job summary is capped at 1 MiB per step and
 * a merge-request note at 1,000,000 characters, and a summary nobody can scroll helps no one.
 */
export function mdTable<Row>(columns: ReadonlyArray<Column<Row>>, rows: readonly Row[], limit = 200): string {
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const out = [line(columns.map((c) => mdText(c.header))), line(columns.map((c) => (c.align === 'right' ? '---:' : ':---')))];
  for (const row of rows.slice(0, limit)) out.push(line(columns.map((c) => c.cell(row))));
  if (rows.length > limit) out.push('', `_… and ${rows.length - limit} more rows; the JSON report (--format json) has them all._`);
  return out.join('\n') + '\n';
}

/**
 * A collapsed section, for what a reviewer reads only when they want to (info findings, notes).
 * The summary line is an HTML block, where Markdown escapes would show: it is HTML-escaped only.
 */
export function mdDetails(summary: string, body: string): string {
  const html = summary.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return `<details><summary>${html}</summary>\n\n${body}\n</details>\n`;
}

/** A whole number with thousands separators, stable across locales (CI machines differ). */
export function mdCount(n: number): string {
  return Math.round(n)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}
