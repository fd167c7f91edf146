import { useEffect, useState } from 'preact/hooks';
import { ApiError } from './api';

/** Loads once per change of `deps`; `reload` fetches again. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[] = []) {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error: Error) => live && setState({ error, loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return { ...state, reload: () => setTick((t) => t + 1) };
}

export function Problem({ error }: { error: Error }) {
  const status = error instanceof ApiError ? error.status : null;
  const text = status === 403 ? `Your token may not see this: ${error.message}` : status === 404 ? `Not found: ${error.message}` : error.message;
  return (
    <p class="problem" role="alert">
      {text}
    </p>
  );
}

export const when = (iso: string | null | undefined) => (iso ? new Date(iso).toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : '—');

/** One formatter per currency: building an Intl.NumberFormat costs more than formatting with it. */
const formatters = new Map<string, Intl.NumberFormat | null>();

export const money = (amount: number, currency: string) => {
  if (!formatters.has(currency)) {
    try {
      formatters.set(currency, new Intl.NumberFormat('en', { style: 'currency', currency, maximumFractionDigits: 0 }));
    } catch {
      formatters.set(currency, null);
    }
  }
  return formatters.get(currency)?.format(amount) ?? `${amount.toFixed(0)} ${currency}`;
};

export function RunLink({ href }: { href?: string }) {
  return href ? (
    <a class="run-link" href={href} target="_blank" rel="noopener noreferrer">
      Run in Temporal UI
    </a>
  ) : null;
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge s-${status.replace(/[^a-z_]/g, '')}`}>{status.replace(/_/g, ' ')}</span>;
}
