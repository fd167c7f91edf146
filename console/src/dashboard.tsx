import { Fragment } from 'preact';
import { api } from './api';
import { StackedBars, TrendChart, type Point } from './charts';
import { Problem, money, useLoad } from './ui';

type Figures = { open: number; acknowledged: number; handled: number };
type MeanTime = { alerts: number; mean_seconds: number | null };
type Dashboard = {
  window: { duration: string };
  active_rules: { rules: number; deployments: number };
  noise: { ratio: number | null; dispositioned: number; false_positive: number; benign: number };
  workload: { total: Figures; teams: ({ team: string | null } & Figures)[]; reason: string | null };
  mttr: { overall: MeanTime };
  coverage: {
    tactics: { items: { id: string; shortname: string; name: string; covered: boolean }[] };
    covered: { id: string; name: string; tactics: string[]; rules: string[] }[];
  };
};
type Roi = {
  noise_saved: { total: number | null; by_source: { new_versions: number; rollbacks: number; removals: number; budget_suppression: number }; reason: string | null };
  cost_avoided: { by_currency: { currency: string; total: number | null }[]; reason: string | null };
};

const hours = (s: number | null) => (s == null ? '—' : `${(s / 3600).toFixed(1)} h`);

/** ATT&CK coverage as tactic × technique: one column per tactic, a cell per covered technique shaded by its number of rules. */
function Heatmap({ coverage }: { coverage: Dashboard['coverage'] }) {
  const max = Math.max(1, ...coverage.covered.map((t) => t.rules.length));
  return (
    <div class="heatmap" role="region" aria-label="ATT&CK coverage by tactic and technique" tabIndex={0}>
      {coverage.tactics.items.map((tactic) => {
        const techniques = coverage.covered.filter((t) => t.tactics.includes(tactic.shortname) || t.tactics.includes(tactic.id));
        return (
          <div class="tactic" key={tactic.id}>
            <h4 class={tactic.covered ? 'covered' : ''}>{tactic.name}</h4>
            {techniques.length === 0 && <div class="cell none">none</div>}
            {techniques.map((t) => (
              <div key={t.id} class={`cell heat-${Math.ceil((t.rules.length / max) * 4)}`} title={`${t.id} ${t.name}: ${t.rules.length} rule(s)`}>
                {t.id} {t.name}
              </div>
            ))}
          </div>
        );
      })}
    </div>
  );
}

export const WEEKS = 4;

/**
 * Per week, oldest first, from the dashboard over nested windows ending now (P7D ⊂ P14D ⊂ …): the
 * counts of a window include those of the shorter ones, so a week's are their difference. MTTR's
 * total time is its mean × its alerts, so a week's mean is its share of each. A week without a
 * dispositioned or closed alert has no figure.
 */
export function weekly(nested: Pick<Dashboard, 'noise' | 'mttr'>[]): { noise: Point[]; mttr: Point[] } {
  const noise: Point[] = [];
  const mttr: Point[] = [];
  for (let i = nested.length - 1; i >= 0; i--) {
    const cur = nested[i]!;
    const inner = i > 0 ? nested[i - 1]! : null;
    const label = i === 0 ? 'this week' : `${i} wk ago`;
    const dispositioned = cur.noise.dispositioned - (inner?.noise.dispositioned ?? 0);
    const noisy = cur.noise.false_positive + cur.noise.benign - (inner ? inner.noise.false_positive + inner.noise.benign : 0);
    noise.push({ label, value: dispositioned > 0 ? noisy / dispositioned : null });
    const total = (d: MeanTime) => (d.mean_seconds ?? 0) * d.alerts;
    const closed = cur.mttr.overall.alerts - (inner?.mttr.overall.alerts ?? 0);
    mttr.push({ label, value: closed > 0 ? (total(cur.mttr.overall) - (inner ? total(inner.mttr.overall) : 0)) / closed : null });
  }
  return { noise, mttr };
}

function Trends() {
  const trend = useLoad(() => Promise.all(Array.from({ length: WEEKS }, (_, i) => api<Dashboard>('GET', `health/dashboard?window=P${7 * (i + 1)}D`))).then(weekly));
  if (trend.error) return <Problem error={trend.error} />;
  if (!trend.data) return <p class="muted">Loading the weekly figures…</p>;
  return (
    <div class="figures">
      <TrendChart points={trend.data.noise} title="Noise ratio per week (false positive + benign of dispositioned alerts)" format={(v) => `${Math.round(v * 100)}%`} />
      <TrendChart points={trend.data.mttr} title="MTTR per week (alerts closed that week)" format={(v) => hours(v)} />
    </div>
  );
}

function Workload({ workload }: { workload: Dashboard['workload'] }) {
  if (workload.teams.length === 0) return <p class="muted">{workload.reason ?? 'No alert was assigned in the window.'}</p>;
  return (
    <StackedBars
      title="Alerts per team in the window"
      keys={['open', 'acknowledged', 'handled']}
      rows={workload.teams.map((t) => ({ label: t.team ?? 'no team', parts: [t.open, t.acknowledged, t.handled] }))}
    />
  );
}

function RoiFigures({ roi }: { roi: Roi }) {
  const s = roi.noise_saved.by_source;
  return (
    <div class="figures">
      <StackedBars
        title="Alerts saved in the window, by source"
        keys={['alerts saved']}
        tones={['p2']}
        rows={[
          { label: 'new versions', parts: [s.new_versions] },
          { label: 'rollbacks', parts: [s.rollbacks] },
          { label: 'removals', parts: [s.removals] },
          { label: 'budget suppression', parts: [s.budget_suppression] },
        ]}
      />
      <dl>
        <dt>Alerts saved</dt>
        <dd>{roi.noise_saved.total ?? '—'}</dd>
        {roi.cost_avoided.by_currency.map((c) => (
          <Fragment key={c.currency}>
            <dt>Cost avoided ({c.currency})</dt>
            <dd>{c.total == null ? '—' : money(c.total, c.currency)}</dd>
          </Fragment>
        ))}
      </dl>
      {(roi.noise_saved.reason || roi.cost_avoided.reason) && <p class="muted small">{roi.noise_saved.reason ?? roi.cost_avoided.reason}</p>}
    </div>
  );
}

export function DashboardPage() {
  const dash = useLoad(() => api<Dashboard>('GET', 'health/dashboard?window=P30D'));
  const roi = useLoad(() => api<Roi>('GET', 'health/roi?window=P30D'));
  return (
    <section aria-labelledby="dash-h">
      <h2 id="dash-h">Dashboard (30 days)</h2>
      {dash.error && <Problem error={dash.error} />}
      {dash.data && (
        <>
          <div class="tiles">
            <div class="tile">
              <span class="n">{dash.data.active_rules.rules}</span> active rules
            </div>
            <div class="tile">
              <span class="n">{dash.data.noise.ratio == null ? '—' : `${Math.round(dash.data.noise.ratio * 100)}%`}</span> noise ratio
            </div>
            <div class="tile">
              <span class="n">{hours(dash.data.mttr.overall.mean_seconds)}</span> MTTR
            </div>
            {roi.data && (
              <div class="tile">
                <span class="n">{roi.data.noise_saved.total ?? '—'}</span> alerts saved
              </div>
            )}
          </div>
          <h3>MITRE ATT&amp;CK coverage</h3>
          <Heatmap coverage={dash.data.coverage} />
          <h3>Noise ratio and MTTR, week by week</h3>
          <Trends />
          <h3>Team workload</h3>
          <Workload workload={dash.data.workload} />
        </>
      )}
      <h3>Return on investment</h3>
      {roi.error && <Problem error={roi.error} />}
      {roi.data ? <RoiFigures roi={roi.data} /> : !roi.error && <p class="muted">Loading…</p>}
    </section>
  );
}
