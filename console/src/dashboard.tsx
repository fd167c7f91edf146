import { api } from './api';
import { Problem, useLoad } from './ui';

type Dashboard = {
  window: { duration: string };
  active_rules: { rules: number; deployments: number };
  noise: { ratio: number | null; dispositioned: number };
  mttr: { overall: { alerts: number; mean_seconds: number | null } };
  coverage: {
    tactics: { items: { id: string; shortname: string; name: string; covered: boolean }[] };
    covered: { id: string; name: string; tactics: string[]; rules: string[] }[];
  };
};
type Roi = { noise_saved: { total: number | null }; cost_avoided: { by_currency: { currency: string; total: number | null }[] } };

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
        </>
      )}
    </section>
  );
}
