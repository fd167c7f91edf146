/** The API client: the token lives in sessionStorage only (gone with the tab), and travels only in the Authorization header. */

const TOKEN_KEY = 'detflow.token';
const base = (): string => document.getElementById('app')?.dataset.api ?? 'api/v1/';

export const tokenStore = {
  get: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  set: (token: string) => sessionStorage.setItem(TOKEN_KEY, token),
  clear: () => sessionStorage.removeItem(TOKEN_KEY),
};

/** An answer other than 2xx: the problem+json's detail when there is one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: { title?: string; detail?: string } | undefined,
  ) {
    super(problem?.detail ?? problem?.title ?? `HTTP ${status}`);
  }
}

export async function api<T = any>(method: string, path: string, body?: unknown, token = tokenStore.get()): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base() + path.replace(/^\//, ''), { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit' });
  const text = await res.text();
  const parsed = text ? (JSON.parse(text) as unknown) : undefined;
  if (!res.ok) throw new ApiError(res.status, parsed as ApiError['problem']);
  return parsed as T;
}

export type Session = { token_id: string; tenant_id: string; principal: string; permissions: string[]; environments: string[] | null; expires_at: string | null };

export const can = (session: Session, permission: string) => session.permissions.includes(permission);
