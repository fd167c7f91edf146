/** A small client for the detflow API, for the CLI: base URL and token from the environment. */
export type ApiClientOptions = { url: string; token: string; fetchImpl?: typeof fetch; timeoutMs?: number };

type Problem = { type?: string; title?: string; detail?: string; errors?: Array<{ pointer: string; message: string }> };

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly problem: Problem | undefined,
    message: string,
  ) {
    super(message);
  }
}

/** The service could not be reached or did not answer in time: nothing about the rules is known. */
export class ConnectionError extends Error {
  override name = 'ConnectionError';
}

/** A CI job must not hang on a stuck service; rule tests on a busy target take seconds, not minutes. */
const DEFAULT_TIMEOUT_MS = 120_000;

/**
 * Whether the service refused this one request because of what it carried (an invalid rule or
 * fixture, a rule over the tier's size), as opposed to the token, the target or the service: the
 * former fails that file and the run goes on, the latter stops the run.
 */
export function isContentRejection(err: unknown): err is ApiError {
  if (!(err instanceof ApiError)) return false;
  return err.status === 400 || err.status === 413 || (err.status === 403 && (err.problem?.type ?? '').endsWith('/resource-limit'));
}

export class ApiClient {
  private readonly base: string;
  constructor(private readonly options: ApiClientOptions) {
    this.base = options.url.replace(/\/+$/, '').replace(/\/api\/v1$/, '') + '/api/v1';
  }

  static fromEnv(env: NodeJS.ProcessEnv = process.env): ApiClient {
    const url = env.DETFLOW_URL;
    const token = env.DETFLOW_TOKEN;
    if (!url) throw new Error('DETFLOW_URL is not set: the address of the detflow service, e.g. http://127.0.0.1:8080');
    if (!token) throw new Error('DETFLOW_TOKEN is not set: an API token (dfw_…) created under settings/api-keys');
    return new ApiClient({ url, token });
  }

  /** A link the API returns (`/api/v1/approvals/…`) as a full address, for a person to open. */
  linkTo(apiPath: string): string {
    return this.base.replace(/\/api\/v1$/, '') + apiPath;
  }

  async request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: T }> {
    return this.send<T>(method, path, body === undefined ? undefined : { text: JSON.stringify(body), contentType: 'application/json' }, headers);
  }

  /** A request whose body is already text of the given type (e.g. NDJSON events). */
  async requestText<T>(method: string, path: string, text: string, contentType: string): Promise<{ status: number; body: T }> {
    return this.send<T>(method, path, { text, contentType }, {});
  }

  private async send<T>(
    method: string,
    path: string,
    body: { text: string; contentType: string } | undefined,
    headers: Record<string, string>,
  ): Promise<{ status: number; body: T }> {
    const doFetch = this.options.fetchImpl ?? fetch;
    const timeoutMs = this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    let res: Response;
    let text: string;
    try {
      res = await doFetch(`${this.base}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.options.token}`, ...(body !== undefined ? { 'content-type': body.contentType } : {}), ...headers },
        signal: AbortSignal.timeout(timeoutMs),
        ...(body !== undefined ? { body: body.text } : {}),
      });
      text = await res.text();
    } catch (err) {
      throw new ConnectionError(`Cannot reach detflow at ${this.base}: ${reasonOf(err, timeoutMs)}`);
    }
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const problem = parsed as Problem | undefined;
      const details = problem?.errors?.map((e) => `\n  ${e.pointer}: ${e.message}`).join('') ?? '';
      throw new ApiError(
        res.status,
        problem,
        `${method} ${path} → ${res.status} ${problem?.title ?? res.statusText}: ${problem?.detail ?? text.slice(0, 500)}${details}${hintFor(res.status, problem)}`,
      );
    }
    return { status: res.status, body: parsed as T };
  }
}

/** fetch reports every network failure as "fetch failed"; the cause says which (ECONNREFUSED, ENOTFOUND…). */
function reasonOf(err: unknown, timeoutMs: number): string {
  const e = err as Error & { cause?: { code?: string; message?: string } };
  if (e.name === 'TimeoutError') return `no answer within ${timeoutMs / 1000} s`;
  const cause = e.cause?.code ?? e.cause?.message;
  return cause ? `${e.message} (${cause})` : e.message;
}

function hintFor(status: number, problem: Problem | undefined): string {
  if (status === 401) return '\n  The token in DETFLOW_TOKEN was refused: check that it is complete, not revoked and not expired.';
  if (status === 403 && (problem?.type ?? '').endsWith('/insufficient-scope')) return '\n  The token in DETFLOW_TOKEN lacks a permission or environment this command needs.';
  return '';
}
