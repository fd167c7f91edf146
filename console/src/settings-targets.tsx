import { useState } from 'preact/hooks';
import { api } from './api';
import { Problem, useLoad, when } from './ui';

type CostModel = { currency: string; price_per_gb_scanned: number; triage_minutes_per_alert: number; cost_per_analyst_hour: number };
type Target = {
  name: string;
  kind: string;
  environment: string;
  connection: Record<string, unknown>;
  detection_interval: string;
  cost_model: CostModel;
  built_in: boolean;
  updated_at: string;
};

/** What the API shows for a stored credential; sent back, it keeps it (the API never shows one). */
const MASKED = '********';
/** The connection keys the API seals as credentials (siem/remote/credentials.ts). */
const CREDENTIAL = /^(token|password|api_key|apikey|client_secret|secret|hec_token|shared_key)$/i;

const short = (v: string) => (v.length > 60 ? `${v.slice(0, 57)}…` : v);

const COST_FIELDS: { key: keyof CostModel; label: string }[] = [
  { key: 'price_per_gb_scanned', label: 'Price per GB scanned' },
  { key: 'triage_minutes_per_alert', label: 'Triage minutes per alert' },
  { key: 'cost_per_analyst_hour', label: 'Cost per analyst hour' },
];

function EditTarget({ target, onSaved, onClose }: { target: Target; onSaved: () => void; onClose: () => void }) {
  const id = (what: string) => `t-${target.name}-${what}`;
  const [cost, setCost] = useState<Record<keyof CostModel, string>>({
    currency: target.cost_model.currency,
    price_per_gb_scanned: String(target.cost_model.price_per_gb_scanned),
    triage_minutes_per_alert: String(target.cost_model.triage_minutes_per_alert),
    cost_per_analyst_hour: String(target.cost_model.cost_per_analyst_hour),
  });
  const [interval, setInterval_] = useState(target.detection_interval);
  // Settings that are not credentials are shown and edited; credentials only ever written.
  const plain = Object.entries(target.connection).filter(([k, v]) => !CREDENTIAL.test(k) && typeof v === 'string') as [string, string][];
  const [settings, setSettings] = useState<Record<string, string>>(Object.fromEntries(plain));
  const credentialKeys = Object.keys(target.connection).filter((k) => CREDENTIAL.test(k));
  const [credentials, setCredentials] = useState<Record<string, string>>({});
  const [error, setError] = useState<Error | null>(null);
  const submit = (e: Event) => {
    e.preventDefault();
    setError(null);
    const connection = {
      ...target.connection,
      ...settings,
      // An empty credential field keeps the stored one.
      ...Object.fromEntries(credentialKeys.map((k) => [k, credentials[k] ? credentials[k] : MASKED])),
    };
    const cost_model = {
      currency: cost.currency.trim().toUpperCase(),
      price_per_gb_scanned: Number(cost.price_per_gb_scanned),
      triage_minutes_per_alert: Number(cost.triage_minutes_per_alert),
      cost_per_analyst_hour: Number(cost.cost_per_analyst_hour),
    };
    api('PUT', `settings/targets/${encodeURIComponent(target.name)}`, {
      name: target.name,
      kind: target.kind,
      environment: target.environment,
      connection,
      detection_interval: interval,
      cost_model,
    }).then(onSaved, (err: Error) => setError(err));
  };
  return (
    <form class="edit-target" onSubmit={submit} aria-label={`Edit ${target.name}`}>
      <fieldset>
        <legend>Cost model</legend>
        <label for={id('currency')}>Currency (ISO 4217)</label>
        <input id={id('currency')} required pattern="[A-Za-z]{3}" value={cost.currency} onInput={(e) => setCost({ ...cost, currency: e.currentTarget.value })} />
        {COST_FIELDS.map((f) => (
          <div key={f.key}>
            <label for={id(f.key)}>{f.label}</label>
            <input id={id(f.key)} type="number" min="0" step="any" required value={cost[f.key]} onInput={(e) => setCost({ ...cost, [f.key]: e.currentTarget.value })} />
          </div>
        ))}
      </fieldset>
      <label for={id('interval')}>Detection interval (ISO 8601, e.g. PT5M)</label>
      <input id={id('interval')} required value={interval} onInput={(e) => setInterval_(e.currentTarget.value)} />
      {(plain.length > 0 || credentialKeys.length > 0) && (
        <fieldset>
          <legend>Connection</legend>
          {plain.map(([k]) => (
            <div key={k}>
              <label for={id(`c-${k}`)}>{k}</label>
              <input id={id(`c-${k}`)} value={settings[k]} onInput={(e) => setSettings({ ...settings, [k]: e.currentTarget.value })} />
            </div>
          ))}
          {credentialKeys.map((k) => (
            <div key={k}>
              <label for={id(`s-${k}`)}>{k} (write-only)</label>
              <input
                id={id(`s-${k}`)}
                type="password"
                autoComplete="new-password"
                value={credentials[k] ?? ''}
                placeholder="stored, never shown: leave empty to keep it"
                onInput={(e) => setCredentials({ ...credentials, [k]: e.currentTarget.value })}
              />
            </div>
          ))}
        </fieldset>
      )}
      <div class="buttons">
        <button type="submit" class="approve">
          Save {target.name}
        </button>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      {error && <Problem error={error} />}
    </form>
  );
}

export function TargetSettings() {
  const list = useLoad(() => api<{ items: Target[] }>('GET', 'settings/targets'));
  const [editing, setEditing] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  return (
    <>
      {list.error && <Problem error={list.error} />}
      {saved && (
        <p role="status" class="small">
          Saved {saved}.
        </p>
      )}
      {list.data?.items.map((t) => (
        <article key={t.name} class="card target" data-target={t.name} aria-labelledby={`target-${t.name}`}>
          <header>
            <h3 id={`target-${t.name}`}>{t.name}</h3>
            <span class="small muted">
              {t.kind} · {t.environment}
              {t.built_in ? ' · built in' : ''}
            </span>
          </header>
          <dl class="target-figures small">
            <dt>Cost model</dt>
            <dd class="cost-model">
              {t.cost_model.price_per_gb_scanned} {t.cost_model.currency}/GB scanned · {t.cost_model.triage_minutes_per_alert} min triage per alert at{' '}
              {t.cost_model.cost_per_analyst_hour} {t.cost_model.currency}/h
            </dd>
            <dt>Detection every</dt>
            <dd>{t.detection_interval}</dd>
            <dt>Connection</dt>
            <dd>
              {Object.keys(t.connection).length === 0
                ? '—'
                : Object.entries(t.connection)
                    .map(([k, v]) => `${k}: ${CREDENTIAL.test(k) ? 'set (write-only)' : short(String(v))}`)
                    .join(' · ')}
            </dd>
            <dt>Updated</dt>
            <dd>{when(t.updated_at)}</dd>
          </dl>
          {editing === t.name ? (
            <EditTarget
              target={t}
              onClose={() => setEditing(null)}
              onSaved={() => {
                setEditing(null);
                setSaved(t.name);
                list.reload();
              }}
            />
          ) : (
            <button onClick={() => setEditing(t.name)} aria-label={`Edit ${t.name}`}>
              Edit
            </button>
          )}
        </article>
      ))}
    </>
  );
}
