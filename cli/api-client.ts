import crypto from 'node:crypto';
import type { Deadline } from './deadline';
import { backoffMs, retryAfterMs, RetryPolicy, TRANSIENT_STATUSES } from './retry';

/** A small client for the detflow API, for the CLI: base URL and token from the environment. */
export type ApiClientOptions = { url: string; token: string; fetchImpl?: typeof fetch; timeoutMs?: number; retry?: RetryPolicy };

/**
 * A submission that may be sent again: its Idempotency-Key makes the service answer a repeat with
 * what the first did. Generated once per command run, so a re-run CI job is a new submission (the
 * service then recognises an equal change by its content, not by the key).
 */
export const newIdempotencyKey = () => `detflow-cli-${crypto.randomUUID()}`;

export type RequestOptions = { headers?: Record<string, string>; idempotencyKey?: string };

type Problem = { type?: string; title?: string; detail?: string; errors?: Array<{ pointer: string; message: string }> };

export class ApiError extends Error {
  override name = 'ApiError';
  constructor(
    readonly status: number,
    readonly problem: Problem | undefined,
    message: string,
    /** The answer's Retry-After, in milliseconds. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** The service could not be reached or did not answer in time: nothing about the rules is known. */
export class ConnectionError extends Error {
  override name = 'ConnectionError';
  constructor(
    message: string,
    /** Why, in a few words (ECONNREFUSED, no answer within 120 s…). */
    readonly reason: string = message,
  ) {
    super(message);
  }
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

  /**
   * The same client, retrying while a command waits (until `deadline`): connection errors and
   * 429/502/503/504 on reads, and on submissions sent with an Idempotency-Key, with backoff and
   * `Retry-After`; a line on stderr (`say`) when the service goes away and when it is back.
   */
  retrying(deadline: Deadline, say: (line: string) => void): ApiClient {
    return new ApiClient({ ...this.options, retry: new RetryPolicy(deadline, say, this.base.replace(/\/api\/v1$/, '')) });
  }

  /** A link the API returns (`/api/v1/approvals/…`) as a full address, for a person to open. */
  linkTo(apiPath: string): string {
    return this.base.replace(/\/api\/v1$/, '') + apiPath;
  }

  async request<T>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<{ status: number; body: T }> {
    const headers = { ...options.headers, ...(options.idempotencyKey ? { 'idempotency-key': options.idempotencyKey } : {}) };
    const encoded = body === undefined ? undefined : { text: JSON.stringify(body), contentType: 'application/json' };
    // A submission sent twice must not act twice: only reads, and submissions with a key, are retried.
    const repeatable = method === 'GET' || options.idempotencyKey !== undefined;
    return repeatable ? this.sendRetrying<T>(method, path, encoded, headers) : this.send<T>(method, path, encoded, headers);
  }

  private async sendRetrying<T>(method: string, path: string, body: { text: string; contentType: string } | undefined, headers: Record<string, string>) {
    const retry = this.options.retry;
    if (!retry) return this.send<T>(method, path, body, headers);
    for (let attempt = 0; ; attempt++) {
      try {
        const answer = await this.send<T>(method, path, body, headers);
        retry.answered();
        return answer;
      } catch (err) {
        const transient = err instanceof ConnectionError || (err instanceof ApiError && TRANSIENT_STATUSES.has(err.status));
        if (!transient) {
          if (err instanceof ApiError) retry.answered();
          throw err;
        }
        // The last attempt goes at the deadline itself, however long the pause would have been.
        const delay = Math.min(retry.deadline.remainingMs, Math.max(backoffMs(attempt), (err instanceof ApiError ? err.retryAfterMs : undefined) ?? 0));
        if (delay <= 0) {
          throw err instanceof ConnectionError ? new ConnectionError(`${err.message}; still so when the --timeout of ${retry.deadline.seconds} s ran out`) : err;
        }
        retry.failed(err instanceof ConnectionError ? `is unreachable (${err.reason})` : `answers ${err.status} ${(err as ApiError).problem?.title ?? ''}`.trimEnd(), delay);
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
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
      const reason = reasonOf(err, timeoutMs);
      throw new ConnectionError(`Cannot reach detflow at ${this.base}: ${reason}`, reason);
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
        retryAfterMs(res.headers.get('retry-after')),
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
