import { SiemRequestError, isSiemRequestError } from '../remote/errors';
import { formBody, type SiemHttpClient } from '../remote/http-client';

/**
 * OAuth 2.0 client credentials against the Microsoft identity platform (v2.0 token endpoint):
 * `POST {authority}/{tenant}/oauth2/v2.0/token` with `grant_type=client_credentials`, the app's id
 * and secret, and `scope={resource}/.default`. One token per scope (ARM and Log Analytics are two
 * resources), kept until shortly before it expires; concurrent callers share one request.
 *
 * Not MSAL / @azure/identity (docs/decisions/0065): every request has to go through the target's
 * SiemHttpClient (CA bundle, timeout, concurrency cap, redaction), the authority is a setting that
 * may be a sovereign or on-premises host where MSAL's instance discovery does not apply, and the
 * Azure core pipeline refuses bearer tokens over plain http, which the loopback fake speaks.
 */

export interface AzureTokenOptions {
  readonly authorityHost: string;
  readonly tenantId: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** Names the target in messages. */
  readonly target: string;
  /** Clock for expiry (tests pin it). */
  readonly now: () => Date;
}

interface CachedToken {
  readonly accessToken: string;
  /** Epoch ms after which the token is fetched again. */
  readonly refreshAt: number;
}

/** A token is renewed this long before it expires (10% of its life, at most five minutes). */
function renewalMargin(expiresInMs: number): number {
  return Math.min(300_000, expiresInMs / 10);
}

export class AzureTokenProvider {
  private readonly cache = new Map<string, CachedToken>();
  private readonly pending = new Map<string, Promise<CachedToken>>();

  constructor(
    private readonly http: SiemHttpClient,
    private readonly options: AzureTokenOptions,
  ) {}

  /** A bearer token for the scope, from the cache while it is fresh. */
  async token(scope: string): Promise<string> {
    const cached = this.cache.get(scope);
    if (cached && this.options.now().getTime() < cached.refreshAt) return cached.accessToken;
    let request = this.pending.get(scope);
    if (!request) {
      request = this.fetch(scope).finally(() => this.pending.delete(scope));
      this.pending.set(scope, request);
    }
    const fresh = await request;
    this.cache.set(scope, fresh);
    return fresh.accessToken;
  }

  /**
   * Runs a call with the scope's token. A 401 means the token expired or was revoked early: the call
   * is retried once with a new token, and a second 401 is the caller's `auth` failure.
   */
  async authorized<T>(scope: string, call: (authorization: string) => Promise<T>): Promise<T> {
    const token = await this.token(scope);
    try {
      return await call(`Bearer ${token}`);
    } catch (err) {
      if (!isSiemRequestError(err) || err.failure !== 'auth') throw err;
      this.invalidate(scope, token);
      return call(`Bearer ${await this.token(scope)}`);
    }
  }

  /** Drops the scope's token if it is still this one (the resource refused it: expired or revoked). */
  invalidate(scope: string, accessToken: string): void {
    if (this.cache.get(scope)?.accessToken === accessToken) this.cache.delete(scope);
  }

  private async fetch(scope: string): Promise<CachedToken> {
    const o = this.options;
    const url = `${o.authorityHost}/${encodeURIComponent(o.tenantId)}/oauth2/v2.0/token`;
    const requestedAt = o.now().getTime();
    let body: { access_token?: unknown; expires_in?: unknown; token_type?: unknown };
    try {
      ({ body } = await this.http.json({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
        body: formBody({ grant_type: 'client_credentials', client_id: o.clientId, client_secret: o.clientSecret, scope }),
      }));
    } catch (err) {
      // The identity platform answers 400 (invalid_request, unauthorized_client, invalid_scope) or
      // 401 (invalid_client) when it refuses the app: no retry fixes that, the settings must change.
      if (isSiemRequestError(err) && (err.details.status === 400 || err.details.status === 401)) {
        throw new SiemRequestError('sentinel', 'auth', `${err.message} (the Entra app's credentials were refused)`, err.details);
      }
      throw err;
    }
    if (typeof body?.access_token !== 'string' || body.access_token === '') {
      throw new SiemRequestError(
        'sentinel',
        'unavailable',
        `sentinel target ${o.target}: POST ${new URL(url).origin}${new URL(url).pathname} answered without an access_token`,
      );
    }
    const expiresInMs = Math.max(0, Number(body.expires_in ?? 0)) * 1000;
    return { accessToken: body.access_token, refreshAt: requestedAt + expiresInMs - renewalMargin(expiresInMs) };
  }
}
