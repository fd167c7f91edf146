/** A small client for the detflow API, for the CLI: base URL and token from the environment. */
export type ApiClientOptions = { url: string; token: string; fetchImpl?: typeof fetch };

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly problem: { type?: string; title?: string; detail?: string; errors?: Array<{ pointer: string; message: string }> } | undefined,
    message: string,
  ) {
    super(message);
  }
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

  async request<T>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: T }> {
    const doFetch = this.options.fetchImpl ?? fetch;
    let res: Response;
    try {
      res = await doFetch(`${this.base}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.options.token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
    } catch (err) {
      throw new Error(`Cannot reach detflow at ${this.base}: ${(err as Error).message}`);
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!res.ok) {
      const problem = parsed as ApiError['problem'];
      const details = problem?.errors?.map((e) => `\n  ${e.pointer}: ${e.message}`).join('') ?? '';
      throw new ApiError(res.status, problem, `${method} ${path} → ${res.status} ${problem?.title ?? res.statusText}: ${problem?.detail ?? text.slice(0, 500)}${details}`);
    }
    return { status: res.status, body: parsed as T };
  }
}
