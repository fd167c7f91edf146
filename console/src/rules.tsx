import { useState } from 'preact/hooks';
import { api, can, type Session } from './api';
import { Sparkline } from './charts';
import { DiffView } from './diff';
import { Problem, RunLink, StatusBadge, useLoad, when } from './ui';

type RuleSummary = { rule_id: string; title: string; latest_version: number; level: string | null; status: string | null; updated_at: string };
type Health = {
  status: string;
  reasons: string[];
  snr: { ratio: number | null; reason: string | null };
  noise_budget: { alerts_per_day: number | null; per_day: { day: string; alerts: number }[] };
  forecasts: {
    deployment_id: string;
    version: number;
    target: string;
    projection: { alerts_per_day: number } | null;
    observation: { alerts_per_day: number } | null;
    within_interval: boolean | null;
  }[];
};
type Deployment = {
  id: string;
  version: number;
  target: string;
  environment: string;
  status: string;
  error: string | null;
  created_at: string;
  activated_at: string | null;
  links: { run?: string };
};

const DAYS = 30;

/** Alerts per UTC day over the window, days without alerts as 0 (the API lists only days with alerts). */
export function dailySeries(perDay: { day: string; alerts: number }[], days = DAYS, now = new Date()): number[] {
  const byDay = new Map(perDay.map((d) => [d.day.slice(0, 10), d.alerts]));
  return Array.from({ length: days }, (_, i) => byDay.get(new Date(now.getTime() - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10)) ?? 0);
}

/** A rollback runs for a few seconds: the deployments are read again each second for a while. */
function pollWhileRunning(reload: () => void, times = 20) {
  let n = 0;
  const timer = setInterval(() => {
    reload();
    if (++n >= times) clearInterval(timer);
  }, 1000);
}

const fmt = (n: number | null | undefined, digits = 2) => (n == null ? '—' : String(Math.round(n * 10 ** digits) / 10 ** digits));

function HealthCells({ ruleId }: { ruleId: string }) {
  const { data, error } = useLoad(() => api<Health>('GET', `health/rules/${encodeURIComponent(ruleId)}?window=P${DAYS}D`), [ruleId]);
  if (error)
    return (
      <td colSpan={3} class="muted">
        health unavailable
      </td>
    );
  if (!data)
    return (
      <td colSpan={3} class="muted">
        …
      </td>
    );
  return (
    <>
      <td>
        <StatusBadge status={data.status} />
      </td>
      <td>{fmt(data.snr.ratio)}</td>
      <td>
        <Sparkline values={dailySeries(data.noise_budget.per_day)} label={`Alerts per day over ${DAYS} days for ${ruleId}`} />
      </td>
    </>
  );
}

export function RulesPage() {
  const { data, error } = useLoad(() => api<{ items: RuleSummary[] }>('GET', 'rules?limit=100'));
  return (
    <section aria-labelledby="rules-h">
      <div class="page-head">
        <h2 id="rules-h">Rules</h2>
      </div>
      {error && <Problem error={error} />}
      {data && data.items.length === 0 && <p class="muted">No rule in the registry yet.</p>}
      {data && data.items.length > 0 && (
        <div class="table-wrap" tabIndex={0} role="region" aria-label="Rules">
          <table class="list">
            <thead>
              <tr>
                <th scope="col">Rule</th>
                <th scope="col">Version</th>
                <th scope="col">Health</th>
                <th scope="col">SNR</th>
                <th scope="col">Alerts/day ({DAYS} d)</th>
              </tr>
            </thead>
            <tbody>
              {data.items.map((r) => (
                <tr key={r.rule_id}>
                  <td>
                    <a href={`#/rules/${encodeURIComponent(r.rule_id)}`}>{r.title}</a>
                    <div class="muted small">{r.rule_id}</div>
                  </td>
                  <td>v{r.latest_version}</td>
                  <HealthCells ruleId={r.rule_id} />
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function Rollback({ ruleId, live, onDone }: { ruleId: string; live: Deployment[]; onDone: () => void }) {
  const [chosen, setTarget] = useState<string | null>(null);
  // The deployments may arrive after the form first shows: until a target is chosen, the first live one.
  const target = chosen ?? live[0]?.target ?? '';
  const [reason, setReason] = useState('');
  const [error, setError] = useState<Error | null>(null);
  const [started, setStarted] = useState<{ run?: string } | null>(null);
  const startedNote = started && (
    <p role="status">
      Rollback started. <RunLink href={started.run} />
    </p>
  );
  // Once the rollback has run nothing may be live any more: the note that it started stays.
  if (live.length === 0) return startedNote || <p class="muted">Nothing of this rule is live: nothing to roll back.</p>;
  const submit = (e: Event) => {
    e.preventDefault();
    setError(null);
    api<{ links: { run?: string } }>('POST', 'rules/rollback', { rule_id: ruleId, target, reason }).then(
      (r) => {
        setStarted(r.links);
        onDone();
      },
      (err: Error) => setError(err),
    );
  };
  return (
    <form class="rollback" onSubmit={submit} aria-labelledby="rollback-h">
      <h3 id="rollback-h">Roll back</h3>
      <label for="rb-target">Target</label>
      <select id="rb-target" value={target} onChange={(e) => setTarget(e.currentTarget.value)}>
        {[...new Set(live.map((d) => d.target))].map((t) => (
          <option key={t} value={t}>
            {t}
          </option>
        ))}
      </select>
      <label for="rb-reason">Reason</label>
      <textarea id="rb-reason" required minLength={1} rows={2} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
      <button type="submit" class="reject" disabled={!reason.trim()}>
        Roll back
      </button>
      {startedNote}
      {error && <Problem error={error} />}
    </form>
  );
}

function Versions({ ruleId, latest }: { ruleId: string; latest: number }) {
  const [from, setFrom] = useState(Math.max(1, latest - 1));
  const versions = useLoad(
    () => api<{ items: { version: number; title: string; created_by: string | null; created_at: string }[] }>('GET', `rules/${encodeURIComponent(ruleId)}/versions`),
    [ruleId],
  );
  const diff = useLoad(
    () => (latest > 1 ? api<{ diff: string }>('GET', `rules/${encodeURIComponent(ruleId)}/diff?from=${from}&to=${latest}`) : Promise.resolve(null)),
    [ruleId, from, latest],
  );
  return (
    <section aria-labelledby="versions-h">
      <h3 id="versions-h">Versions</h3>
      {versions.error && <Problem error={versions.error} />}
      <ul class="versions">
        {versions.data?.items.map((v) => (
          <li key={v.version}>
            v{v.version} · {v.title} · {when(v.created_at)} {v.created_by ? `· ${v.created_by}` : ''}
          </li>
        ))}
      </ul>
      {latest > 1 && (
        <>
          <label for="diff-from">Compare v{latest} with</label>
          <select id="diff-from" value={from} onChange={(e) => setFrom(Number(e.currentTarget.value))}>
            {Array.from({ length: latest - 1 }, (_, i) => i + 1).map((v) => (
              <option key={v} value={v}>
                v{v}
              </option>
            ))}
          </select>
          {diff.data && <DiffView diff={diff.data.diff} left={`v${from}`} right={`v${latest}`} />}
        </>
      )}
    </section>
  );
}

export function RulePage({ ruleId, session }: { ruleId: string; session: Session }) {
  const rule = useLoad(() => api<RuleSummary>('GET', `rules/${encodeURIComponent(ruleId)}`), [ruleId]);
  const health = useLoad(() => api<Health>('GET', `health/rules/${encodeURIComponent(ruleId)}?window=P${DAYS}D`), [ruleId]);
  const deps = useLoad(() => api<{ items: Deployment[] }>('GET', `deployments?rule_id=${encodeURIComponent(ruleId)}&limit=100`), [ruleId]);
  if (rule.error) return <Problem error={rule.error} />;
  if (!rule.data) return <p class="muted">Loading…</p>;
  const live = (deps.data?.items ?? []).filter((d) => d.status === 'active' || d.status === 'demoted');
  return (
    <section aria-labelledby="rule-h">
      <p>
        <a href="#/rules">← Rules</a>
      </p>
      <h2 id="rule-h">{rule.data.title}</h2>
      <p class="muted">
        {rule.data.rule_id} · latest v{rule.data.latest_version} · level {rule.data.level ?? '—'}
      </p>
      {health.data && (
        <div class="card">
          <h3>Health ({DAYS} days)</h3>
          <p>
            <StatusBadge status={health.data.status} /> SNR {fmt(health.data.snr.ratio)} · {fmt(health.data.noise_budget.alerts_per_day)} alerts/day
          </p>
          <Sparkline values={dailySeries(health.data.noise_budget.per_day)} label={`Alerts per day over ${DAYS} days`} />
          {health.data.reasons.length > 0 && (
            <ul class="small muted">
              {health.data.reasons.map((r) => (
                <li key={r}>{r}</li>
              ))}
            </ul>
          )}
          {health.data.forecasts.length > 0 && (
            <div class="table-wrap" tabIndex={0} role="region" aria-label="Forecasts">
              <table class="list">
                <caption>Forecast against observed alerts/day</caption>
                <thead>
                  <tr>
                    <th scope="col">Deployment</th>
                    <th scope="col">Forecast</th>
                    <th scope="col">Observed</th>
                    <th scope="col">Within 95%</th>
                  </tr>
                </thead>
                <tbody>
                  {health.data.forecasts.map((f) => (
                    <tr key={f.deployment_id}>
                      <td>
                        v{f.version} on {f.target}
                      </td>
                      <td>{fmt(f.projection?.alerts_per_day)}</td>
                      <td>{fmt(f.observation?.alerts_per_day)}</td>
                      <td>{f.within_interval == null ? '—' : f.within_interval ? 'yes' : 'no'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </div>
      )}
      {health.error && <Problem error={health.error} />}
      <section aria-labelledby="deps-h" class="card">
        <h3 id="deps-h">Deployments</h3>
        {deps.error && <Problem error={deps.error} />}
        <div class="table-wrap" tabIndex={0} role="region" aria-label="Deployments">
          <table class="list deployments">
            <thead>
              <tr>
                <th scope="col">Target</th>
                <th scope="col">Version</th>
                <th scope="col">State</th>
                <th scope="col">Since</th>
                <th scope="col">Run</th>
              </tr>
            </thead>
            <tbody>
              {deps.data?.items.map((d) => (
                <tr key={d.id} data-deployment={d.id}>
                  <td>
                    {d.target} <span class="muted">({d.environment})</span>
                  </td>
                  <td>v{d.version}</td>
                  <td>
                    <StatusBadge status={d.status} />
                    {d.error && <div class="small muted">{d.error}</div>}
                  </td>
                  <td>{when(d.activated_at ?? d.created_at)}</td>
                  <td>
                    <RunLink href={d.links.run} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        {can(session, 'deploy') && <Rollback ruleId={ruleId} live={live} onDone={() => pollWhileRunning(deps.reload)} />}
      </section>
      <Versions ruleId={ruleId} latest={rule.data.latest_version} />
    </section>
  );
}
