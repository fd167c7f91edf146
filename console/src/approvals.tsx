import { useEffect, useMemo, useState } from 'preact/hooks';
import { api, can, tokenStore, type Session } from './api';
import { AlertsChart, DailyChart, type Bar, type Day } from './charts';
import { DiffView } from './diff';
import { Lazy } from './lazy';
import { Problem, RunLink, StatusBadge, money, useLoad, when } from './ui';

type Interval = { ci95: { low: number; high: number } } | null;
type TargetImpact = {
  target: string;
  environment: string;
  projected_alerts_per_day: number;
  alerts_per_day: Interval;
  cost_per_day: { currency: string; total: number };
  /** Null on summaries recorded before they carried per-day counts. */
  per_day: Day[] | null;
  current: { version: number; projected_alerts_per_day: number; alerts_per_day: Interval; per_day: Day[] | null } | null;
  noise_delta_per_day: number;
  over_budget: boolean;
  diff: string;
  low_confidence?: boolean | null;
};
export type Approval = {
  id: string;
  rule_id: string;
  version: number;
  targets: string[];
  status: string;
  description: string | null;
  link: string | null;
  noise_budget: { max_alerts_per_day: number } | null;
  impact: { targets: TargetImpact[]; low_confidence_reasons?: string[] | null } | null;
  requested_by_principal: string | null;
  created_at: string;
  expires_at: string | null;
  links: { run?: string };
};

const signed = (n: number) => (n > 0 ? `+${n}` : `${n}`);

function Impact({ approval }: { approval: Approval }) {
  if (!approval.impact) return <p class="muted">The impact summary is being computed…</p>;
  const budget = approval.noise_budget?.max_alerts_per_day ?? null;
  return (
    <div class="impact">
      {approval.impact.targets.map((t) => {
        const bars: Bar[] = [
          { label: `v${approval.version} (new)`, value: t.projected_alerts_per_day, low: t.alerts_per_day?.ci95.low, high: t.alerts_per_day?.ci95.high, kind: 'new' },
        ];
        if (t.current)
          bars.push({
            label: `v${t.current.version} (live)`,
            value: t.current.projected_alerts_per_day,
            low: t.current.alerts_per_day?.ci95.low,
            high: t.current.alerts_per_day?.ci95.high,
            kind: 'current',
          });
        return (
          <section class="target-impact" key={t.target} aria-label={`Impact on ${t.target}`}>
            <h4>
              {t.target} <span class="muted">({t.environment})</span> {t.over_budget && <span class="badge s-failing">over budget</span>}
              {t.low_confidence && <span class="badge s-degraded">low confidence</span>}
            </h4>
            <div class="figures">
              <Lazy minHeight={120}>
                {() => (
                  <>
                    <AlertsChart bars={bars} budget={budget} title={`Projected alerts per day on ${t.target} (replay of the last 7 days)`} />
                    {t.per_day ? (
                      <DailyChart
                        days={t.per_day}
                        live={t.current?.per_day ?? null}
                        budget={budget}
                        title={`Replay's alerts by UTC day on ${t.target}, v${approval.version} as bars${t.current ? `, v${t.current.version} (live) as dots` : ''}`}
                      />
                    ) : (
                      <p class="muted small">No per-day counts: this summary was computed before they were recorded.</p>
                    )}
                  </>
                )}
              </Lazy>
              <dl>
                <dt>Alerts/day</dt>
                <dd>{t.projected_alerts_per_day}</dd>
                <dt>Noise delta</dt>
                <dd class={t.noise_delta_per_day > 0 ? 'up' : 'down'}>{signed(t.noise_delta_per_day)}/day</dd>
                <dt>Cost per month</dt>
                <dd>{money(t.cost_per_day.total * 30, t.cost_per_day.currency)}</dd>
              </dl>
            </div>
            <Lazy minHeight={Math.min(600, 24 + 20 * t.diff.split('\n').length)}>
              {() => <DiffView diff={t.diff} left={t.current ? `v${t.current.version} (live)` : 'nothing live'} right={`v${approval.version}`} />}
            </Lazy>
          </section>
        );
      })}
    </div>
  );
}

function Decide({ approval, session, onDone }: { approval: Approval; session: Session; onDone: (status: string) => void }) {
  const [comment, setComment] = useState('');
  const [error, setError] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  if (approval.status !== 'pending') return null;
  if (!can(session, 'approve')) return <p class="muted">Your token does not hold the approve permission.</p>;
  if (approval.requested_by_principal === session.principal)
    return (
      <p class="four-eyes" role="note">
        You requested this change: another reviewer must decide it (four-eyes).
      </p>
    );
  const decide = (decision: string) => {
    setBusy(true);
    setError(null);
    api<Approval>('POST', `approvals/${approval.id}/decision`, { decision, ...(comment ? { comment } : {}) }).then(
      (a) => onDone(a.status),
      (e: Error) => {
        setBusy(false);
        setError(e);
      },
    );
  };
  const commentId = `comment-${approval.id}`;
  return (
    <div class="decide">
      <label for={commentId}>Comment</label>
      <textarea id={commentId} rows={2} value={comment} onInput={(e) => setComment(e.currentTarget.value)} />
      <div class="buttons">
        <button class="approve" disabled={busy} onClick={() => decide('approve')}>
          Approve
        </button>
        <button class="reject" disabled={busy} onClick={() => decide('reject')}>
          Reject
        </button>
        <button disabled={busy} onClick={() => decide('request_changes')}>
          Request changes
        </button>
      </div>
      {error && <Problem error={error} />}
    </div>
  );
}

export function ApprovalCard({ approval, session }: { approval: Approval; session: Session }) {
  const [decided, setDecided] = useState<string | null>(null);
  return (
    <article class="card approval" aria-labelledby={`a-${approval.id}`}>
      <header>
        <h3 id={`a-${approval.id}`}>
          {approval.rule_id} <span class="muted">v{approval.version}</span>
        </h3>
        <StatusBadge status={decided ?? approval.status} />
      </header>
      <p class="meta">
        Requested by <strong>{approval.requested_by_principal ?? 'unknown'}</strong> at {when(approval.created_at)} · expires {when(approval.expires_at)} · targets{' '}
        {approval.targets.join(', ')} · <RunLink href={approval.links.run} />
      </p>
      {approval.description && <p>{approval.description}</p>}
      {approval.link && (
        <p>
          <a href={approval.link} rel="noopener noreferrer" target="_blank">
            Change link
          </a>
        </p>
      )}
      <Impact approval={approval} />
      {decided ? (
        <p role="status" class="decided">
          Decision recorded: {decided.replace(/_/g, ' ')}.
        </p>
      ) : (
        <Decide approval={approval} session={session} onDone={setDecided} />
      )}
    </article>
  );
}

const FIRST_BATCH = 10;
const BATCH = 200;

const listPending = () =>
  api<{ items: Approval[] }>('GET', 'approvals?status=pending&limit=200').then((list) => {
    performance.mark('inbox:fetched');
    return list;
  });
let prefetched: { token: string | null; list: ReturnType<typeof listPending> } | null = null;

/** Asks for the inbox while the session is being checked (main.tsx): one round trip off the first render. */
export function prefetchInbox() {
  prefetched = { token: tokenStore.get(), list: listPending() };
  prefetched.list.catch(() => undefined);
}

export function ApprovalsPage({ session }: { session: Session }) {
  const { data, error, loading, reload } = useLoad(() => {
    // Only what was asked with the token signed in now (a refused one is cleared before another is entered).
    const early = prefetched?.token === tokenStore.get() ? prefetched?.list : undefined;
    prefetched = null;
    return early ?? listPending();
  });
  // The first screenful is drawn at once, the rest a batch per task: a long inbox never holds up the first paint.
  const [shown, setShown] = useState(FIRST_BATCH);
  // One element per approval, made once: each batch diffs only the cards it adds (Preact skips an
  // element it has already rendered), not every card drawn before it.
  const cards = useMemo(() => data?.items.map((a) => <ApprovalCard key={a.id} approval={a} session={session} />) ?? [], [data, session]);
  useEffect(() => {
    if (!data) return;
    // User Timing marks: bench/console.ts reads them (the first screenful drawn, then the whole inbox).
    if (shown === FIRST_BATCH) performance.mark('inbox:first-batch');
    if (shown >= data.items.length) {
      performance.mark('inbox:complete');
      return;
    }
    // After the browser has painted what is there.
    let timer = 0;
    const frame = requestAnimationFrame(() => (timer = window.setTimeout(() => setShown((n) => n + BATCH), 0)));
    return () => {
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, [data, shown]);
  return (
    <section aria-labelledby="approvals-h">
      <div class="page-head">
        <h2 id="approvals-h">Approvals inbox</h2>
        <button onClick={reload}>Refresh</button>
      </div>
      {error && <Problem error={error} />}
      {loading && !data && <p class="muted">Loading…</p>}
      {data && data.items.length === 0 && <p class="muted">Nothing waits for a decision.</p>}
      {data && (
        <p class="muted" role="status">
          {data.items.length} pending, newest first.
        </p>
      )}
      {cards.slice(0, shown)}
    </section>
  );
}
