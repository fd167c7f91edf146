import { useState } from 'preact/hooks';
import { api, can, type Session } from './api';
import { Problem, useLoad, when } from './ui';
import { WebhookSettings } from './settings-webhook';
import { TargetSettings } from './settings-targets';
import { TenantSettings } from './settings-tenants';

type ApiKey = {
  id: string;
  name: string;
  prefix: string;
  permissions: string[];
  environments: string[] | null;
  principal: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
};
const PERMISSIONS = ['rules:read', 'rules:write', 'events:write', 'deploy', 'approve', 'admin'];

function CreateKey({ session, onCreated }: { session: Session; onCreated: () => void }) {
  const [name, setName] = useState('');
  const [perms, setPerms] = useState<string[]>(['rules:read']);
  const [error, setError] = useState<Error | null>(null);
  const [token, setToken] = useState<string | null>(null);
  const submit = (e: Event) => {
    e.preventDefault();
    setError(null);
    api<{ token: string }>('POST', 'settings/api-keys', { name, permissions: perms }).then(
      (k) => {
        setToken(k.token);
        setName('');
        onCreated();
      },
      (err: Error) => setError(err),
    );
  };
  const grantable = PERMISSIONS.filter((p) => session.permissions.includes(p));
  return (
    <form class="card create-key" onSubmit={submit} aria-labelledby="create-key-h">
      <h3 id="create-key-h">Create an API key</h3>
      <label for="key-name">Name</label>
      <input id="key-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <fieldset>
        <legend>Permissions</legend>
        {grantable.map((p) => (
          <label key={p} class="check">
            <input type="checkbox" checked={perms.includes(p)} onChange={(e) => setPerms(e.currentTarget.checked ? [...perms, p] : perms.filter((x) => x !== p))} /> {p}
          </label>
        ))}
      </fieldset>
      <button type="submit" disabled={!name.trim() || perms.length === 0}>
        Create key
      </button>
      {error && <Problem error={error} />}
      {token && (
        <div class="new-token" role="status">
          <label for="new-token">The new token, shown only now: copy it</label>
          <input id="new-token" readOnly value={token} onFocus={(e) => e.currentTarget.select()} />
          <button type="button" onClick={() => setToken(null)}>
            Done
          </button>
        </div>
      )}
    </form>
  );
}

function RevokeButton({ apiKey, onDone }: { apiKey: ApiKey; onDone: () => void }) {
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<Error | null>(null);
  if (!confirming)
    return (
      <button class="reject" onClick={() => setConfirming(true)} aria-label={`Revoke ${apiKey.name}`}>
        Revoke
      </button>
    );
  return (
    <>
      <button
        class="reject"
        onClick={() => void api('DELETE', `settings/api-keys/${apiKey.id}`).then(onDone, (e: Error) => setError(e))}
        aria-label={`Confirm revoking ${apiKey.name}`}
      >
        Confirm revoke
      </button>
      <button onClick={() => setConfirming(false)}>Cancel</button>
      {error && <Problem error={error} />}
    </>
  );
}

function ApiKeySettings({ session }: { session: Session }) {
  const keys = useLoad(() => api<{ items: ApiKey[] }>('GET', 'settings/api-keys?limit=500'));
  return (
    <>
      {keys.error && <Problem error={keys.error} />}
      <CreateKey session={session} onCreated={keys.reload} />
      {keys.data && (
        <div class="table-wrap" tabIndex={0} role="region" aria-label="API keys">
          <table class="list keys">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Principal</th>
                <th scope="col">Permissions</th>
                <th scope="col">Created</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {keys.data.items.map((k) => (
                <tr key={k.id} data-key={k.name}>
                  <td>{k.name}</td>
                  <td>
                    <code>{k.prefix}…</code>
                  </td>
                  <td>{k.principal}</td>
                  <td class="small">{k.permissions.join(', ')}</td>
                  <td>{when(k.created_at)}</td>
                  <td>{k.revoked_at ? `revoked ${when(k.revoked_at)}` : k.id === session.token_id ? 'this session' : <RevokeButton apiKey={k} onDone={keys.reload} />}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

/** The settings sections, each shown only to a token whose permission its API needs. */
const SECTIONS = [
  { name: 'keys', label: 'API keys', needs: 'admin' },
  { name: 'webhook', label: 'Webhook', needs: 'admin' },
  { name: 'targets', label: 'Targets', needs: 'admin' },
  { name: 'tenants', label: 'Tenants', needs: 'operator' },
] as const;

/** Settings are for admins (keys, webhook, targets) and for the service operator (tenants). */
export const SETTINGS_PERMISSIONS = ['admin', 'operator'];

export function SettingsPage({ session, section }: { session: Session; section?: string }) {
  const visible = SECTIONS.filter((s) => can(session, s.needs));
  const current = visible.find((s) => s.name === section) ?? visible[0];
  if (!current)
    return (
      <p class="problem" role="alert">
        Your token may not see this page.
      </p>
    );
  return (
    <section aria-labelledby="settings-h">
      <h2 id="settings-h">Settings · {current.label}</h2>
      {visible.length > 1 && (
        <nav aria-label="Settings sections" class="subnav">
          {visible.map((s) => (
            <a key={s.name} href={s.name === 'keys' ? '#/settings' : `#/settings/${s.name}`} aria-current={s.name === current.name ? 'page' : undefined}>
              {s.label}
            </a>
          ))}
        </nav>
      )}
      {current.name === 'keys' ? (
        <ApiKeySettings session={session} />
      ) : current.name === 'webhook' ? (
        <WebhookSettings />
      ) : current.name === 'targets' ? (
        <TargetSettings />
      ) : (
        <TenantSettings />
      )}
    </section>
  );
}
