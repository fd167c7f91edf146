import { mdCode, mdCount, mdTable, mdText } from './markdown';
import type { Renderable } from './report-output';
import { replayPassed, type ReplayOutcome, type ReplayView } from './replay';

export const REPLAY_FORMATS = ['text', 'json', 'markdown'] as const;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** Alerts per day: two decimals while small (0.14/day is a different rule from 0/day), whole beyond 100. */
const perDay = (n: number) => (n >= 100 ? mdCount(n) : n.toFixed(2));
const money = (n: number, currency: string) => `${n.toFixed(2)} ${currency}`;

const nameOf = (o: ReplayOutcome) => (o.subject.kind === 'file' ? o.subject.file : o.subject.ruleId);
const fileOf = (o: ReplayOutcome) => (o.subject.kind === 'file' ? o.subject.file : null);
const ruleOf = (o: ReplayOutcome) => (o.kind === 'ran' ? `${o.replay.rule_id}${o.replay.version === null ? '' : ` v${o.replay.version}`}` : null);

/** The rule id (and version) replayed, as Markdown; for a refused file, nothing (its file says it). */
function ruleCell(o: ReplayOutcome): string | null {
  if (o.kind === 'ran') return `${mdCode(o.replay.rule_id)}${o.replay.version === null ? '' : ` v${o.replay.version}`}`;
  return o.subject.kind === 'id' ? mdCode(o.subject.ruleId) : null;
}

/** Why a rule did not pass, in words; null when it did. */
function whyFailed(o: ReplayOutcome): string | null {
  if (o.kind === 'rule-rejected') return `the registry refused the rule: ${o.error}`;
  const r = o.replay;
  if (r.status !== 'completed') return `the replay ended ${r.status}${r.error ? `: ${r.error}` : ''}`;
  const budget = r.result?.noise.budget;
  if (budget && !budget.within_budget) return `over its noise budget of ${budget.max_alerts_per_day} alerts/day on ${plural(budget.days_over_budget, 'day')}`;
  return null;
}

function interval(result: NonNullable<ReplayView['result']>): string {
  const a = result.alerts_per_day;
  return a ? `${perDay(a.estimate)} alerts/day (95% CI ${perDay(a.ci95.low)}–${perDay(a.ci95.high)})` : 'alerts/day not known';
}

function monthly(result: NonNullable<ReplayView['result']>): string {
  const c = result.cost;
  return `${money(c.per_month, c.currency)}/month${c.per_month_ci95 ? ` (95% CI ${c.per_month_ci95.low.toFixed(2)}–${c.per_month_ci95.high.toFixed(2)})` : ''}`;
}

function textLines(o: ReplayOutcome): string[] {
  if (o.kind === 'rule-rejected') return [`refused   ${nameOf(o)}: ${o.error}`];
  const r = o.replay;
  const from = fileOf(o) ? `${fileOf(o)} → ` : '';
  const head = `${r.status.padEnd(9)} ${from}${ruleOf(o)} on ${r.target}, ${r.window.from} … ${r.window.to}`;
  if (!r.result) return [`${head}: ${r.error ?? 'no figures recorded'}`];
  const x = r.result;
  const lines = [
    head,
    `  events ${mdCount(x.events_scanned)} · alerts ${mdCount(x.alerts.total)} · ${interval(x)} · cost ${money(x.cost.total, x.cost.currency)} over ${+x.cost.window_days.toFixed(2)} days, ${monthly(x)}`,
  ];
  if (x.low_confidence) lines.push(`  low confidence: ${(x.low_confidence_reasons ?? []).join('; ') || 'the sample is thin'}`);
  const why = whyFailed(o);
  if (why) lines.push(`  failed: ${why}`);
  return lines;
}

type Row = ReplayOutcome;

/**
 * The replay figures per rule, in every format the command offers: what a reviewer wants before
 * merging a rule (how many alerts a day, with how much certainty, at what cost).
 */
export function replayReport(outcomes: readonly ReplayOutcome[], request: { target: string; window: string }): Renderable<(typeof REPLAY_FORMATS)[number]> {
  const failed = outcomes.filter((o) => !replayPassed(o));
  const completed = outcomes.filter((o) => o.kind === 'ran' && o.replay.status === 'completed').length;
  const summary = () =>
    `replay (${request.target}, ${request.window}): ${plural(outcomes.length, 'rule')}, ${completed} completed — ` +
    (failed.length === 0 ? 'passed' : `${plural(failed.length, 'rule')} failed`);

  return {
    summary,
    text: () => [...outcomes.flatMap(textLines), summary()].join('\n') + '\n',
    json: () => ({
      target: request.target,
      window: request.window,
      passed: failed.length === 0,
      results: outcomes.map((o) => ({
        ...(fileOf(o) ? { file: fileOf(o) } : {}),
        passed: replayPassed(o),
        ...(o.kind === 'ran' ? { pushed: o.pushed ?? null, replay: o.replay } : { error: o.error }),
        ...(whyFailed(o) ? { reason: whyFailed(o) } : {}),
      })),
    }),
    markdown: () => {
      const verdict = failed.length === 0 ? '✅ passed' : `❌ ${plural(failed.length, 'rule')} failed`;
      // Failed rules first: they are what the reviewer must act on.
      const rows = [...outcomes].sort((a, b) => Number(replayPassed(a)) - Number(replayPassed(b)));
      const result = (o: Row) => (o.kind === 'ran' ? o.replay.result : null);
      const parts = [
        `### detflow replay (${mdText(request.target)}, last ${mdText(request.window)}): ${verdict}\n`,
        mdTable(
          [
            // The file and the rule id with the version replayed; an id from the command line once.
            { header: 'Rule', cell: (o: Row) => [fileOf(o) ? mdCode(fileOf(o)!) : null, ruleCell(o)].filter((x) => x !== null).join('<br>') },
            { header: 'Status', cell: (o: Row) => (replayPassed(o) ? '✅ ' : '❌ ') + (o.kind === 'ran' ? o.replay.status : 'refused') },
            { header: 'Events', align: 'right', cell: (o: Row) => (result(o) ? mdCount(result(o)!.events_scanned) : '') },
            { header: 'Alerts', align: 'right', cell: (o: Row) => (result(o) ? mdCount(result(o)!.alerts.total) : '') },
            {
              header: 'Alerts/day (95% CI)',
              align: 'right',
              cell: (o: Row) => {
                const a = result(o)?.alerts_per_day;
                return a ? `${perDay(a.estimate)} (${perDay(a.ci95.low)}–${perDay(a.ci95.high)})` : '';
              },
            },
            { header: 'Cost/month', align: 'right', cell: (o: Row) => (result(o) ? mdText(money(result(o)!.cost.per_month, result(o)!.cost.currency)) : '') },
            { header: 'Confidence', cell: (o: Row) => (result(o)?.low_confidence ? '⚠️ low' : result(o)?.low_confidence === false ? 'ok' : '') },
          ],
          rows,
        ),
      ];
      const problems = rows.flatMap((o) => (whyFailed(o) ? [{ o, text: whyFailed(o)! }] : []));
      if (problems.length > 0) {
        parts.push(
          '#### Failed\n',
          mdTable(
            [
              { header: 'Rule', cell: (p: (typeof problems)[number]) => mdCode(nameOf(p.o)) },
              { header: 'Why', cell: (p: (typeof problems)[number]) => mdText(p.text) },
            ],
            problems,
          ),
        );
      }
      const thin = rows.flatMap((o) => (result(o)?.low_confidence ? [{ o, reasons: result(o)!.low_confidence_reasons ?? [] }] : []));
      if (thin.length > 0) {
        parts.push(
          '#### Low-confidence projections\n',
          mdTable(
            [
              { header: 'Rule', cell: (t: (typeof thin)[number]) => mdCode(nameOf(t.o)) },
              { header: 'Why the projection is uncertain', cell: (t: (typeof thin)[number]) => t.reasons.map(mdText).join('<br>') },
            ],
            thin,
          ),
        );
      }
      return parts.join('\n');
    },
  };
}

export function replayFailed(outcomes: readonly ReplayOutcome[]): boolean {
  return outcomes.some((o) => !replayPassed(o));
}
