import { useState } from 'preact/hooks';
import { api } from './api';
import { Problem, useLoad, when } from './ui';

type Tenant = { id: string; name: string; tier: string; retention_days: number; environments: string[]; created_at: string };
const TIERS = ['free', 'professional', 'enterprise', 'unlimited'];

function CreateTenant({ onCreated }: { onCreated: () => void }) {
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const [tier, setTier] = useState('professional');
  const [environments, setEnvironments] = useState('dev, staging, prod');
  const [error, setError] = useState<Error | null>(null);
  const [token, setToken] = useState<string | null>(null);
  const submit = (e: Event) => {
    e.preventDefault();
    setError(null);
    const envs = environments
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    api<{ admin_token: { token: string } }>('POST', 'settings/tenants', { id, name, tier, environments: envs }).then(
      (t) => {
        setToken(t.admin_token.token);
        setId('');
        setName('');
        onCreated();
      },
      (err: Error) => setError(err),
    );
  };
  return (
    <form class="card" onSubmit={submit} aria-labelledby="create-tenant-h">
      <h3 id="create-tenant-h">Create a tenant</h3>
      <label for="tenant-id">Id (lowercase letters, digits, _ and -)</label>
      <input id="tenant-id" required pattern="[a-z0-9][a-z0-9_\-]{1,62}" value={id} onInput={(e) => setId(e.currentTarget.value)} />
      <label for="tenant-name">Name</label>
      <input id="tenant-name" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      <label for="tenant-tier">Tier</label>
      <select id="tenant-tier" value={tier} onChange={(e) => setTier(e.currentTarget.value)}>
        {TIERS.map((t) => (
          <option key={t} value={t}>
            {t}
          </option>
        ))}
      </select>
      <label for="tenant-envs">Environments (comma-separated)</label>
      <input id="tenant-envs" required value={environments} onInput={(e) => setEnvironments(e.currentTarget.value)} />
      <div class="buttons">
        <button type="submit">Create tenant</button>
      </div>
      {error && <Problem error={error} />}
      {token && (
        <div class="new-token" role="status">
          <label for="tenant-token">The tenant's first admin token, shown only now: copy it</label>
          <input id="tenant-token" readOnly value={token} onFocus={(e) => e.currentTarget.select()} />
          <button type="button" onClick={() => setToken(null)}>
            Done
          </button>
        </div>
      )}
    </form>
  );
}

export function TenantSettings() {
  const list = useLoad(() => api<{ items: Tenant[] }>('GET', 'settings/tenants?limit=500'));
  return (
    <>
      <CreateTenant onCreated={list.reload} />
      {list.error && <Problem error={list.error} />}
      {list.data && (
        <div class="table-wrap" tabIndex={0} role="region" aria-label="Tenants">
          <table class="list tenants">
            <thead>
              <tr>
                <th scope="col">Id</th>
                <th scope="col">Name</th>
                <th scope="col">Tier</th>
                <th scope="col">Environments</th>
                <th scope="col">Retention</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              {list.data.items.map((t) => (
                <tr key={t.id} data-tenant={t.id}>
                  <td>
                    <code>{t.id}</code>
                  </td>
                  <td>{t.name}</td>
                  <td>{t.tier}</td>
                  <td class="small">{t.environments.join(', ')}</td>
                  <td>{t.retention_days} days</td>
                  <td>{when(t.created_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
