import MarkdownIt from 'markdown-it';
import type { FileLint } from '../../cli/lint';
import { lintReport } from '../../cli/lint-report';
import { mdCode, mdCount, mdTable, mdText } from '../../cli/markdown';
import type { ReplayOutcome, ReplayView } from '../../cli/replay';
import { replayFailed, replayReport } from '../../cli/replay-report';
import type { RuleTestOutcome, RuleTestResult } from '../../cli/rule-test';
import { testReport } from '../../cli/test-report';
import { lintForTarget } from '../../sigma/lint/for-target';

/** A GFM renderer with inline HTML on, as GitHub job summaries and GitLab notes have it. */
const gfm = new MarkdownIt({ html: true });

const decode = (html: string) =>
  html
    .replace(/<br>/g, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&(#\d+|lt|gt|amp|quot);/g, (_, e: string) => (e.startsWith('#') ? String.fromCodePoint(Number(e.slice(1))) : { lt: '<', gt: '>', amp: '&', quot: '"' }[e]!));

/** Every table of the rendered Markdown: header cells, then rows of cell texts as a reader sees them. */
function tables(markdown: string): Array<{ headers: string[]; rows: string[][] }> {
  const html = gfm.render(markdown);
  return [...html.matchAll(/<table>([\s\S]*?)<\/table>/g)].map(([, t]) => ({
    headers: [...t!.matchAll(/<th(?:\s[^>]*)?>([\s\S]*?)<\/th>/g)].map((m) => decode(m[1]!)),
    rows: [...t!.matchAll(/<tr>\s*(<td[\s\S]*?)<\/tr>/g)].map((r) => [...r[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((m) => decode(m[1]!))),
  }));
}

const headings = (markdown: string) => [...gfm.render(markdown).matchAll(/<h[34]>([\s\S]*?)<\/h[34]>/g)].map((m) => decode(m[1]!));

describe('Markdown for job summaries and merge-request notes', () => {
  const hostile = 'a | b <script>alert(1)</script> *not bold* `tick` [link](x) \\ end @timestamp\nsecond line';

  it('shows text exactly as given, inside a table cell, however it is written', () => {
    const t = tables(mdTable([{ header: 'Text', cell: (r: string) => mdText(r) }], [hostile]));
    // The only change a reader sees: a zero-width space after @, so no user named timestamp is notified.
    expect(t[0]!.rows[0]![0]).toBe(hostile.replace('@', '@\u200b'));
    expect(gfm.render(mdText(hostile))).not.toMatch(/<script>|<em>|<a |<code>/);
  });

  it('keeps code (a Windows path with a pipe and backslashes) in one cell, unchanged', () => {
    const path = 'C:\\Temp\\|x `y`';
    const t = tables(
      mdTable(
        [
          { header: 'A', cell: (r: string) => mdCode(r) },
          { header: 'B', cell: () => 'next' },
        ],
        [path],
      ),
    );
    expect(t[0]!.rows[0]).toEqual([path, 'next']);
    expect(gfm.render(mdCode(path))).toContain('<code>');
  });

  it('caps a table and says how many rows were left out', () => {
    const md = mdTable([{ header: 'N', cell: (n: number) => String(n) }], [1, 2, 3, 4, 5], 3);
    expect(tables(md)[0]!.rows).toEqual([['1'], ['2'], ['3']]);
    expect(md).toContain('… and 2 more rows');
  });

  it('writes counts with separators, whatever the locale', () => {
    expect([mdCount(0), mdCount(999), mdCount(1234567)]).toEqual(['0', '999', '1,234,567']);
  });
});

const BROKEN = `title: Broken
id: 7d0e8a52-6c1b-4f3e-9a27-0b5c4d3e2f10
status: test
level: high
logsource:
  product: windows
detection:
  selection:
    Image|endswithh: 'x.exe'
  condition: selection and filter
`;
const CLEAN = `title: Clean enough rule
id: 3a9f4f3c-0a44-4a53-9c37-5b0bd36e1d11
status: test
description: Finds the evil tool by its image name
author: someone
date: 2026-01-01
level: high
logsource:
  category: process_creation
  product: windows
detection:
  selection:
    Image|endswith: '\\evil.exe'
  condition: selection
`;

describe('lint --format markdown', () => {
  const lint = (file: string, text: string): FileLint => ({ file, seconds: 0, ok: true, report: lintForTarget(text, { name: 'local', kind: 'local' }) });
  const results: FileLint[] = [
    lint('rules/a_clean.yml', CLEAN),
    lint('rules/b|broken.yml', BROKEN),
    { file: 'rules/c_huge.yml', seconds: 0, ok: false, error: 'POST /rules/lint → 413: the rule is over <64 KiB>' },
  ];
  const md = lintReport(results, 'local').markdown();

  it('heads with the verdict and the counts', () => {
    expect(headings(md)[0]).toBe('detflow lint (local): ❌ 2 files failed');
    const [counts] = tables(md);
    expect(counts!.headers).toEqual(['Files', 'Failed', 'Errors', 'Warnings', 'Info']);
    expect(counts!.rows).toEqual([['3', '2', '3', expect.any(String), expect.any(String)]]);
  });

  it('lists refused files, then errors before warnings with file, position, code and message; info folded away', () => {
    const [, refused, findings, info] = tables(md);
    expect(refused!.rows).toEqual([['rules/c_huge.yml', 'POST /rules/lint → 413: the rule is over <64 KiB>']]);
    expect(findings!.headers).toEqual(['File', 'Line', 'Severity', 'Code', 'Message']);
    const severities = findings!.rows.map((r) => r[2]);
    expect(severities.slice(0, 3)).toEqual(['error', 'error', 'error']);
    expect(severities.slice(3).every((s) => s === 'warning')).toBe(true);
    expect(findings!.rows[0]).toEqual(['rules/b|broken.yml', '9:5', 'error', 'modifier-unknown', "unknown modifier 'endswithh'"]);
    expect(info!.rows.every((r) => r[2] === 'info')).toBe(true);
    expect(md).toMatch(/<details><summary>\d+ info findings?<\/summary>/);
  });

  it('says passed when nothing failed, with no findings table for a clean run', () => {
    const clean = lintReport([lint('rules/a_clean.yml', CLEAN)], 'splunk').markdown();
    expect(headings(clean)).toEqual(['detflow lint (splunk): ✅ passed']);
  });
});

describe('test --format markdown', () => {
  const fixtures = {
    dir: 'rules/r.fixtures',
    fixtures: ['{"name":"evil run"}', '{"name":"benign | quiet"}'],
    origins: ['rules/r.fixtures/01.json', 'rules/r.fixtures/02.json'],
  };
  const result = (passed: boolean): RuleTestResult => ({
    id: 'x',
    rule_id: 'rule-1',
    version: 2,
    target: 'local',
    passed,
    summary: { total: 2, passed: passed ? 2 : 1, failed: passed ? 0 : 1 },
    tests: [
      { name: 'evil run', expect: 'match', passed: true, reason: 'matched', matched_on_target: true, matched_in_evaluator: true },
      {
        name: 'benign | quiet',
        expect: 'no_match',
        passed,
        reason: passed ? 'no match' : 'matched although no match was expected',
        matched_on_target: true,
        matched_in_evaluator: true,
      },
    ],
    coverage: { overall_percent: 75.4 },
    quality: [{ code: 'no_negative_near_miss', severity: 'info', message: 'no negative fixture comes close' }],
  });
  const stored = { rule_id: 'rule-1', version: 2, created: true, title: 't' };
  const outcomes: RuleTestOutcome[] = [
    { file: 'rules/ok.yml', fixtures, seconds: 0, kind: 'ran', stored, result: result(true) },
    { file: 'rules/r.yml', fixtures, seconds: 0, kind: 'ran', stored, result: result(false) },
    { file: 'rules/bad.yml', fixtures, seconds: 0, kind: 'rule-rejected', error: 'not a Sigma rule' },
  ];
  const md = testReport(outcomes, 'local').markdown();

  it('heads with the verdict and counts, then the failed fixtures with the file they came from', () => {
    expect(headings(md)).toEqual(['detflow test (local): ❌ 2 rules failed', 'Failed fixtures', 'Refused by the service', 'Rules']);
    const [counts, failed, refused, rules, notes] = tables(md);
    expect(counts!.rows).toEqual([['3', '4', '3', '1']]);
    expect(failed!.rows).toEqual([['rules/r.yml', 'benign | quiet\nrules/r.fixtures/02.json', 'no_match', 'matched although no match was expected']]);
    expect(refused!.rows).toEqual([['rules/bad.yml', 'rule', 'not a Sigma rule']]);
    // Failed rules first, in their order; the passing one last.
    expect(rules!.rows.map((r) => [r[0], r.at(-1)])).toEqual([
      ['rules/r.yml', '❌ failed'],
      ['rules/bad.yml', '❌ refused'],
      ['rules/ok.yml', '✅ passed'],
    ]);
    expect(rules!.rows[2]).toEqual(['rules/ok.yml', 'rule-1 v2', '2/2', '75%', '✅ passed']);
    expect(notes!.rows).toHaveLength(2);
  });
});

describe('replay reports', () => {
  const view = (over: Omit<Partial<ReplayView>, 'result'> & { result?: Partial<NonNullable<ReplayView['result']>> | null }): ReplayView => {
    const base: ReplayView = {
      id: 'r1',
      rule_id: 'rule-1',
      version: 3,
      target: 'local',
      window: { from: '2026-11-20T00:00:00.000Z', to: '2026-11-27T00:00:00.000Z' },
      status: 'completed',
      result: {
        events_scanned: 12345,
        alerts: { total: 42, mean_per_day: 6, peak_per_day: 9 },
        noise: { noise_ratio: 0.1, budget: null },
        cost: { currency: 'EUR', total: 3.5, per_month: 15.25, per_month_ci95: { low: 11, high: 20.5 }, window_days: 7 },
        alerts_per_day: { estimate: 6, ci95: { low: 4.324, high: 8.11 }, method: 'poisson-exact-garwood' },
        low_confidence: false,
        low_confidence_reasons: [],
      },
      error: null,
      links: { self: '/api/v1/replays/r1' },
    };
    return { ...base, ...over, result: over.result === null ? null : { ...base.result!, ...over.result } } as ReplayView;
  };
  const outcomes: ReplayOutcome[] = [
    { subject: { kind: 'file', file: 'rules/ok.yml' }, seconds: 1, kind: 'ran', replay: view({}) },
    {
      subject: { kind: 'id', ruleId: 'thin-rule' },
      seconds: 1,
      kind: 'ran',
      replay: view({ rule_id: 'thin-rule', version: 1, result: { low_confidence: true, low_confidence_reasons: ['only 2 alerts', 'events on 1 of 7 days'] } }),
    },
    {
      subject: { kind: 'id', ruleId: 'broken-run' },
      seconds: 1,
      kind: 'ran',
      replay: view({ rule_id: 'broken-run', status: 'failed', error: 'the target <was> down', result: null }),
    },
    { subject: { kind: 'file', file: 'rules/bad.yml' }, seconds: 0, kind: 'rule-rejected', error: 'not a Sigma rule' },
  ];
  const report = replayReport(outcomes, { target: 'local', window: 'P7D' });

  it('prints per rule its events, alerts, alerts/day with the interval, cost and low confidence', () => {
    const text = report.text();
    expect(text).toContain('completed rules/ok.yml → rule-1 v3 on local, 2026-11-20T00:00:00.000Z … 2026-11-27T00:00:00.000Z\n');
    expect(text).toContain('  events 12,345 · alerts 42 · 6.00 alerts/day (95% CI 4.32–8.11) · cost 3.50 EUR over 7 days, 15.25 EUR/month (95% CI 11.00–20.50)\n');
    expect(text).toContain('  low confidence: only 2 alerts; events on 1 of 7 days\n');
    expect(text).toContain('failed    broken-run v3 on local, 2026-11-20T00:00:00.000Z … 2026-11-27T00:00:00.000Z: the target <was> down\n');
    expect(text).toContain('refused   rules/bad.yml: not a Sigma rule\n');
    expect(text.trimEnd().split('\n').at(-1)).toBe('replay (local, P7D): 4 rules, 2 completed — 2 rules failed');
    expect(replayFailed(outcomes)).toBe(true);
    expect(replayFailed(outcomes.slice(0, 2))).toBe(false);
  });

  it('renders Markdown with failed rules first, then why they failed and why projections are uncertain', () => {
    const md = report.markdown();
    expect(headings(md)).toEqual(['detflow replay (local, last P7D): ❌ 2 rules failed', 'Failed', 'Low-confidence projections']);
    const [main, failed, thin] = tables(md);
    expect(main!.headers).toEqual(['Rule', 'Status', 'Events', 'Alerts', 'Alerts/day (95% CI)', 'Cost/month', 'Confidence']);
    expect(main!.rows.map((r) => r[0])).toEqual(['broken-run v3', 'rules/bad.yml', 'rules/ok.yml\nrule-1 v3', 'thin-rule v1']);
    expect(main!.rows[2]).toEqual(['rules/ok.yml\nrule-1 v3', '✅ completed', '12,345', '42', '6.00 (4.32–8.11)', '15.25 EUR', 'ok']);
    expect(main!.rows[3]!.at(-1)).toBe('⚠️ low');
    expect(failed!.rows).toEqual([
      ['broken-run', 'the replay ended failed: the target <was> down'],
      ['rules/bad.yml', 'the registry refused the rule: not a Sigma rule'],
    ]);
    expect(thin!.rows).toEqual([['thin-rule', 'only 2 alerts\nevents on 1 of 7 days']]);
  });

  it('fails a rule over its noise budget, saying on how many days', () => {
    const over: ReplayOutcome = {
      subject: { kind: 'id', ruleId: 'loud' },
      seconds: 1,
      kind: 'ran',
      replay: view({ rule_id: 'loud', result: { noise: { noise_ratio: 0, budget: { max_alerts_per_day: 5, days_over_budget: 3, within_budget: false } } } }),
    };
    expect(replayFailed([over])).toBe(true);
    expect(replayReport([over], { target: 'local', window: 'P7D' }).text()).toContain('  failed: over its noise budget of 5 alerts/day on 3 days\n');
  });

  it('carries every replay in full in JSON, with passed and the reason per rule', () => {
    const json = report.json() as any;
    expect(json).toMatchObject({ target: 'local', window: 'P7D', passed: false });
    expect(json.results[0]).toEqual({ file: 'rules/ok.yml', passed: true, pushed: null, replay: outcomes[0]!.kind === 'ran' ? outcomes[0]!.replay : null });
    expect(json.results[2]).toMatchObject({ passed: false, reason: 'the replay ended failed: the target <was> down' });
    expect(json.results[3]).toEqual({ file: 'rules/bad.yml', passed: false, error: 'not a Sigma rule', reason: 'the registry refused the rule: not a Sigma rule' });
  });
});
