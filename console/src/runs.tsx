import { useEffect, useState } from 'preact/hooks';
import { api, can, type Session } from './api';
import { Problem, RunLink, StatusBadge, useLoad, when } from './ui';

type RunBase = { id: string; rule_id: string; version: number | null; target: string; status: string; error: string | null; created_at: string; ended_at: string | null };
type Replay = RunBase & {
  window: { from: string; to: string };
  progress: { chunks_done: number; chunks_total: number | null; events_scanned: number; alerts: number; processed_until: string } | null;
  links: { self: string; cancel: string; run?: string };
};
type Shadow = RunBase & {
  duration: string;
  interval: string;
  progress: { started_at: string; ends_at: string; evaluations: number; events_scanned: number; alerts: number } | null;
  result: { evaluations: number; events_scanned: number; alerts: { projected_total: number }; stopped_early: boolean } | null;
  links: { self: string; stop: string; run?: string };
};
type Page<T> = { items: T[]; next_cursor: string | null };

/** How often the page reads the runs again while one of them is running. */
const POLL_MS = 2000;

/** A progress bar with its figures in words beside it (the bar alone says nothing to a screen reader). */
function Progress({ label, value, max, text }: { label: string; value: number | null; max: number | null; text: string }) {
  return (
    <div class="run-progress">
      {value !== null && max ? <progress aria-label={label} value={value} max={max} /> : <progress aria-label={label} />}
      <span class="small">{text}</span>
    </div>
  );
}

function replayProgress(r: Replay) {
  const p = r.progress;
  if (!p) return <Progress label={`Progress of replay ${r.id}`} value={null} max={null} text={r.status === 'running' ? 'starting…' : 'no figures'} />;
  const total = p.chunks_total;
  const percent = total ? Math.round((100 * p.chunks_done) / total) : null;
  return (
    <Progress
      label={`Progress of replay ${r.id}`}
      value={p.chunks_done}
      max={total}
      text={`${p.chunks_done}/${total ?? '?'} chunks${percent === null ? '' : ` (${percent}%)`} · ${p.events_scanned.toLocaleString('en')} events · ${p.alerts} alerts`}
    />
  );
}

function shadowProgress(s: Shadow, now: number) {
  const label = `Progress of shadow evaluation ${s.id}`;
  if (s.progress) {
    const start = Date.parse(s.progress.started_at);
    const span = Date.parse(s.progress.ends_at) - start;
    const done = Math.min(Math.max(now - start, 0), span);
    return (
      <Progress
        label={label}
        value={done}
        max={span}
        text={`${s.progress.evaluations} evaluations · ${s.progress.events_scanned.toLocaleString('en')} events · ${s.progress.alerts} alerts · ends ${when(s.progress.ends_at)}`}
      />
    );
  }
  if (s.result)
    return (
      <Progress
        label={label}
        value={1}
        max={1}
        text={`${s.result.evaluations} evaluations · ${s.result.events_scanned.toLocaleString('en')} events · ${s.result.alerts.projected_total} alerts projected${s.result.stopped_early ? ' · stopped early' : ''}`}
      />
    );
  return <Progress label={label} value={null} max={null} text={s.status === 'running' ? 'starting…' : 'no figures'} />;
}

/** Cancel (a replay) or Stop (a shadow evaluation), asked twice: a click on the first button only asks to confirm. */
function EndButton({ verb, what, path, onDone }: { verb: 'Cancel' | 'Stop'; what: string; path: string; onDone: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  const [sent, setSent] = useState(false);
  if (sent) return <span class="small muted">{verb === 'Cancel' ? 'Cancelling…' : 'Stopping…'}</span>;
  if (!confirming)
    return (
      <button class="reject" onClick={() => setConfirming(true)} aria-label={`${verb} ${what}`}>
        {verb}
      </button>
    );
  return (
    <span class="buttons">
      <button
        class="reject"
        aria-label={`Confirm: ${verb.toLowerCase()} ${what}`}
        onClick={() =>
          void api('POST', path.replace(/^\/api\/v1\//, '')).then(
            () => {
              setSent(true);
              onDone();
            },
            (e: Error) => setError(e),
          )
        }
      >
        {verb === 'Cancel' ? 'Confirm cancel' : 'Confirm stop'}
      </button>
      <button onClick={() => setConfirming(false)}>Keep running</button>
      {error && <Problem error={error} />}
    </span>
  );
}

function RunCard({
  kind,
  run,
  children,
  end,
}: {
  kind: string;
  run: RunBase & { links: { run?: string } };
  children: preact.ComponentChildren;
  end: preact.ComponentChildren;
}) {
  return (
    <article class="card run" data-run={run.id} aria-labelledby={`run-${run.id}`}>
      <header>
        <h4 id={`run-${run.id}`}>
          <a href={`#/rules/${encodeURIComponent(run.rule_id)}`}>{run.rule_id}</a>
          {run.version !== null ? ` v${run.version}` : ' (inline)'}
        </h4>
        <StatusBadge status={run.status} />
      </header>
      <p class="meta small">
        {kind} on {run.target} · started {when(run.created_at)}
        {run.ended_at ? ` · ended ${when(run.ended_at)}` : ''}
      </p>
      {children}
      {run.error && <p class="problem small">{run.error}</p>}
      <div class="buttons">
        {run.status === 'running' && end}
        <RunLink href={run.links.run} />
      </div>
    </article>
  );
}

export function RunsPage({ session }: { session: Session }) {
  const runs = useLoad(() => Promise.all([api<Page<Replay>>('GET', 'replays?limit=50'), api<Page<Shadow>>('GET', 'shadows?limit=50')]));
  const [now, setNow] = useState(Date.now());
  const running = runs.data ? [...runs.data[0].items, ...runs.data[1].items].some((r) => r.status === 'running') : false;
  // Live while something runs: read again every POLL_MS; nothing is polled once every run has ended.
  useEffect(() => {
    if (!running || runs.loading) return;
    const timer = setTimeout(() => {
      setNow(Date.now());
      runs.reload();
    }, POLL_MS);
    return () => clearTimeout(timer);
  }, [running, runs.loading, runs.data]);
  const mayEnd = can(session, 'rules:write');
  return (
    <section aria-labelledby="runs-h">
      <div class="page-head">
        <h2 id="runs-h">Runs</h2>
        <span class="small muted" role="status">
          {running ? 'Updating live while runs are running' : ''}
        </span>
      </div>
      {runs.error && <Problem error={runs.error} />}
      {runs.data && (
        <>
          <h3 id="replays-h">Replays</h3>
          {runs.data[0].items.length === 0 && <p class="muted">No replay yet: start one with `detflow replay` or POST /api/v1/rules/replay.</p>}
          {runs.data[0].items.map((r) => (
            <RunCard
              key={r.id}
              kind={`Replay of ${when(r.window.from)} – ${when(r.window.to)}`}
              run={r}
              end={mayEnd && <EndButton verb="Cancel" what={`replay of ${r.rule_id}`} path={r.links.cancel} onDone={runs.reload} />}
            >
              {replayProgress(r)}
            </RunCard>
          ))}
          <h3 id="shadows-h">Shadow evaluations</h3>
          {runs.data[1].items.length === 0 && <p class="muted">No shadow evaluation yet.</p>}
          {runs.data[1].items.map((s) => (
            <RunCard
              key={s.id}
              kind={`Shadow evaluation for ${s.duration}, every ${s.interval},`}
              run={s}
              end={mayEnd && <EndButton verb="Stop" what={`shadow evaluation of ${s.rule_id}`} path={s.links.stop} onDone={runs.reload} />}
            >
              {shadowProgress(s, now)}
            </RunCard>
          ))}
        </>
      )}
    </section>
  );
}
