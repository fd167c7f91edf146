import { useEffect, useState } from 'preact/hooks';
import { ApiError, api } from './api';
import { Problem, RunLink, StatusBadge, useLoad, when } from './ui';

type Webhook = { url: string; events: string[]; enabled: boolean; secret_set: boolean; updated_at: string };
type Attempt = { attempt: number; at: string; status_code: number | null; error: string | null; duration_ms: number };
type Delivery = { id: string; event: string; url: string; status: 'pending' | 'delivered' | 'failed'; attempts: Attempt[]; last_error: string | null; created_at: string };

/** The events a webhook may subscribe to (the API's PutWebhook schema; `webhook.test` is sent only on request). */
const EVENTS = [
  'approval.requested',
  'approval.decided',
  'deployment.succeeded',
  'deployment.failed',
  'rollback.completed',
  'deployment.demoted',
  'deployment.promoted',
  'replay.completed',
  'shadow.completed',
  'noise_budget.exceeded',
  'rule.health_degraded',
  'deployment.drifted',
];

/** A webhook not set up yet reads as 404: an empty form, not an error. */
const loadWebhook = () => api<Webhook>('GET', 'settings/webhook').catch((e: Error) => (e instanceof ApiError && e.status === 404 ? null : Promise.reject(e)));

function WebhookForm({ webhook, onSaved }: { webhook: Webhook | null; onSaved: () => void }) {
  const [url, setUrl] = useState(webhook?.url ?? '');
  const [secret, setSecret] = useState('');
  const [events, setEvents] = useState<string[]>(webhook?.events ?? EVENTS);
  const [enabled, setEnabled] = useState(webhook?.enabled ?? true);
  const [error, setError] = useState<Error | null>(null);
  const [saved, setSaved] = useState(false);
  const submit = (e: Event) => {
    e.preventDefault();
    setError(null);
    setSaved(false);
    // The secret is write-only: sent only when typed, kept by the API when left out.
    api('PUT', 'settings/webhook', { url, events, enabled, ...(secret ? { secret } : {}) }).then(
      () => {
        setSecret('');
        setSaved(true);
        onSaved();
      },
      (err: Error) => setError(err),
    );
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="webhook-form-h">
      <h3 id="webhook-form-h">{webhook ? 'Webhook' : 'Set up a webhook'}</h3>
      <label for="webhook-url">URL</label>
      <input id="webhook-url" type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} placeholder="https://…" />
      <label for="webhook-secret">Secret (HMAC key for X-Detflow-Signature, at least 16 characters)</label>
      <input
        id="webhook-secret"
        type="password"
        autoComplete="new-password"
        minLength={16}
        required={!webhook?.secret_set}
        value={secret}
        onInput={(e) => setSecret(e.currentTarget.value)}
        placeholder={webhook?.secret_set ? 'set, never shown: leave empty to keep it' : ''}
      />
      <fieldset>
        <legend>Events</legend>
        {EVENTS.map((ev) => (
          <label key={ev} class="check">
            <input type="checkbox" checked={events.includes(ev)} onChange={(e) => setEvents(e.currentTarget.checked ? [...events, ev] : events.filter((x) => x !== ev))} />{' '}
            {ev}
          </label>
        ))}
      </fieldset>
      <label class="check">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} /> Enabled
      </label>
      <div class="buttons">
        <button type="submit" class="approve" disabled={!url || events.length === 0}>
          Save webhook
        </button>
      </div>
      {saved && (
        <p role="status" class="small">
          Saved.
        </p>
      )}
      {error && <Problem error={error} />}
    </form>
  );
}

function Redeliver({ delivery, onDone }: { delivery: Delivery; onDone: () => void }) {
  const [error, setError] = useState<Error | null>(null);
  return (
    <>
      <button
        onClick={() => void api('POST', `settings/webhook/deliveries/${delivery.id}/redeliver`).then(onDone, (e: Error) => setError(e))}
        aria-label={`Redeliver ${delivery.event} of ${when(delivery.created_at)}`}
      >
        Redeliver
      </button>
      {error && <Problem error={error} />}
    </>
  );
}

/** How long the log keeps reading after a send, waiting for its delivery to appear. */
const FOLLOW_MS = 20_000;

function Deliveries({ tick }: { tick: number }) {
  const log = useLoad(() => api<{ items: Delivery[] }>('GET', 'settings/webhook/deliveries?limit=50'), [tick]);
  const pending = log.data?.items.some((d) => d.status === 'pending') ?? false;
  // A send (tick) is recorded by its workflow a moment later: the log follows it for a while.
  const [followUntil, setFollowUntil] = useState(0);
  useEffect(() => setFollowUntil(tick ? Date.now() + FOLLOW_MS : 0), [tick]);
  // A delivery being tried is read again every 2 s until it is delivered or given up.
  useEffect(() => {
    if (log.loading || !(pending || Date.now() < followUntil)) return;
    const timer = setTimeout(log.reload, 2000);
    return () => clearTimeout(timer);
  }, [pending, followUntil, log.loading, log.data]);
  return (
    <section aria-labelledby="deliveries-h">
      <div class="page-head">
        <h3 id="deliveries-h">Delivery log</h3>
        <button onClick={log.reload}>Refresh</button>
      </div>
      {log.error && <Problem error={log.error} />}
      {log.data && log.data.items.length === 0 && <p class="muted">Nothing sent yet.</p>}
      {log.data && log.data.items.length > 0 && (
        <div class="table-wrap" tabIndex={0} role="region" aria-label="Webhook deliveries">
          <table class="list deliveries">
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Sent</th>
                <th scope="col">Last error</th>
              </tr>
            </thead>
            <tbody>
              {log.data.items.map((d) => (
                <tr key={d.id} data-delivery={d.id} data-event={d.event}>
                  <td>{d.event}</td>
                  <td>
                    <StatusBadge status={d.status} />
                  </td>
                  <td>
                    {d.attempts.length}
                    {d.attempts.at(-1)?.status_code ? ` (HTTP ${d.attempts.at(-1)!.status_code})` : ''}
                  </td>
                  <td>{when(d.created_at)}</td>
                  <td class="small">
                    {d.last_error ?? '—'} {d.status === 'failed' && <Redeliver delivery={d} onDone={log.reload} />}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

export function WebhookSettings() {
  const webhook = useLoad(loadWebhook);
  const [tick, setTick] = useState(0);
  const [test, setTest] = useState<{ sent?: boolean; run?: string; error?: Error } | null>(null);
  const sendTest = () => {
    setTest(null);
    api<{ links: { run?: string } }>('POST', 'settings/webhook/test').then(
      (r) => {
        setTest({ sent: true, run: r.links.run });
        setTick((t) => t + 1);
      },
      (error: Error) => setTest({ error }),
    );
  };
  if (webhook.error) return <Problem error={webhook.error} />;
  if (webhook.data === undefined) return <p class="muted">Loading…</p>;
  return (
    <>
      <WebhookForm key={webhook.data?.updated_at ?? 'new'} webhook={webhook.data} onSaved={webhook.reload} />
      {webhook.data && (
        <div class="buttons">
          <button onClick={sendTest}>Send a test notification</button>
          {test?.sent && (
            <span role="status" class="small">
              Test sent. <RunLink href={test.run} />
            </span>
          )}
          {test?.error && <Problem error={test.error} />}
        </div>
      )}
      <Deliveries tick={tick} />
    </>
  );
}
