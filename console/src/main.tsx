import './app.css';
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, can, tokenStore, type Session } from './api';
import { ApprovalsPage, prefetchInbox } from './approvals';
import { DashboardPage } from './dashboard';
import { RulePage, RulesPage } from './rules';
import { RunsPage } from './runs';
import { SETTINGS_PERMISSIONS, SettingsPage } from './settings';

type Page = { name: 'approvals' | 'rules' | 'rule' | 'runs' | 'dashboard' | 'settings'; arg?: string };

/** Pages live in the fragment: nothing of the token or of what is shown reaches a server log or a Referer. */
function parseHash(): Page {
  const [, name, arg] = location.hash.split('/');
  if (name === 'rules' && arg) return { name: 'rule', arg: decodeURIComponent(arg) };
  if (name === 'settings') return { name, arg };
  if (name === 'rules' || name === 'runs' || name === 'dashboard') return { name };
  return { name: 'approvals' };
}

function SignIn({ onSession, error }: { onSession: (s: Session) => void; error?: string }) {
  const [token, setToken] = useState('');
  const [problem, setProblem] = useState(error ?? '');
  const submit = (e: Event) => {
    e.preventDefault();
    api<Session>('GET', 'session', undefined, token.trim()).then(
      (s) => {
        tokenStore.set(token.trim());
        onSession(s);
      },
      (err: Error) => setProblem(err instanceof ApiError && err.status === 401 ? 'This token is not valid (unknown, revoked or expired).' : err.message),
    );
  };
  return (
    <main class="signin">
      <h1>detflow console</h1>
      <form onSubmit={submit} autoComplete="off">
        <label for="token">API token</label>
        <input id="token" type="password" autoComplete="off" spellcheck={false} required value={token} onInput={(e) => setToken(e.currentTarget.value)} placeholder="dfw_…" />
        <button type="submit">Sign in</button>
        <p class="small muted">The token stays in this tab's session storage and is sent only in the Authorization header.</p>
        {problem && (
          <p class="problem" role="alert">
            {problem}
          </p>
        )}
      </form>
    </main>
  );
}

/** Each page with the permissions that show it (any one of them). */
const NAV: { name: Page['name']; label: string; needs: string[] }[] = [
  { name: 'approvals', label: 'Approvals', needs: ['rules:read'] },
  { name: 'rules', label: 'Rules', needs: ['rules:read'] },
  { name: 'runs', label: 'Runs', needs: ['rules:read'] },
  { name: 'dashboard', label: 'Dashboard', needs: ['rules:read'] },
  { name: 'settings', label: 'Settings', needs: SETTINGS_PERMISSIONS },
];

function Shell({ session, onSignOut }: { session: Session; onSignOut: () => void }) {
  const [page, setPage] = useState(parseHash());
  useEffect(() => {
    const onHash = () => setPage(parseHash());
    addEventListener('hashchange', onHash);
    return () => removeEventListener('hashchange', onHash);
  }, []);
  const visible = NAV.filter((n) => n.needs.some((p) => can(session, p)));
  const current = page.name === 'rule' ? 'rules' : page.name;
  const allowed = visible.some((n) => n.name === current);
  useEffect(() => {
    document.title = `${NAV.find((n) => n.name === current)?.label ?? 'detflow'} · detflow console`;
  }, [current]);
  return (
    <>
      <header class="top">
        <span class="brand">detflow</span>
        <nav aria-label="Main">
          {visible.map((n) => (
            <a key={n.name} href={`#/${n.name}`} aria-current={n.name === current ? 'page' : undefined}>
              {n.label}
            </a>
          ))}
        </nav>
        <span class="who">
          <span class="principal">{session.principal}</span>
          <button onClick={onSignOut}>Sign out</button>
        </span>
      </header>
      <main id="main">
        {!allowed ? (
          <p class="problem" role="alert">
            Your token may not see this page.
          </p>
        ) : page.name === 'approvals' ? (
          <ApprovalsPage session={session} />
        ) : page.name === 'rules' ? (
          <RulesPage />
        ) : page.name === 'rule' ? (
          <RulePage ruleId={page.arg!} session={session} />
        ) : page.name === 'runs' ? (
          <RunsPage session={session} />
        ) : page.name === 'dashboard' ? (
          <DashboardPage />
        ) : (
          <SettingsPage session={session} section={page.arg} />
        )}
      </main>
    </>
  );
}

function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [checking, setChecking] = useState(tokenStore.get() !== null);
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    if (!tokenStore.get()) return;
    if (parseHash().name === 'approvals') prefetchInbox();
    api<Session>('GET', 'session').then(
      (s) => {
        setSession(s);
        setChecking(false);
      },
      () => {
        tokenStore.clear();
        setError('Your session ended: sign in again.');
        setChecking(false);
      },
    );
  }, []);
  if (checking) return <p class="muted">Signing in…</p>;
  if (!session) return <SignIn onSession={setSession} error={error} />;
  return (
    <Shell
      session={session}
      onSignOut={() => {
        tokenStore.clear();
        setSession(null);
      }}
    />
  );
}

render(<App />, document.getElementById('app')!);
