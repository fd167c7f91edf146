import { credentialValues } from '../remote/credentials';
import { formBody, SiemHttpClient, type HttpRequest } from '../remote/http-client';
import type { SplunkConnection } from './connection';

/**
 * Splunk's REST API (management port) as the adapter uses it: every request carries
 * `output_mode=json` in its query string so that answers are JSON rather than Atom/XML, every body
 * is `application/x-www-form-urlencoded`, and collections are read page by page (`count`/`offset`,
 * `paging.total`). Reference: Splunk REST API Reference Manual, "Search endpoint descriptions"
 * (https://docs.splunk.com/Documentation/Splunk/9.4.0/RESTREF/RESTsearch) and the REST API User
 * Manual's "Basic concepts" (output_mode, pagination and filtering parameters).
 */

/** One entry of a Splunk collection answer (`entry[]` of an Atom feed rendered as JSON). */
export interface SplunkEntry<TContent = Record<string, unknown>> {
  readonly name: string;
  readonly id?: string;
  readonly updated?: string;
  readonly author?: string;
  readonly acl?: { readonly app?: string; readonly owner?: string; readonly sharing?: string };
  readonly content: TContent;
}

interface SplunkFeed<TContent> {
  readonly entry?: ReadonlyArray<SplunkEntry<TContent>>;
  readonly paging?: { readonly total?: number; readonly perPage?: number; readonly offset?: number };
}

/** The answer of a search job in `exec_mode=oneshot` with `output_mode=json`. */
export interface SplunkResults {
  readonly results: ReadonlyArray<Record<string, unknown>>;
  readonly messages?: ReadonlyArray<{ readonly type: string; readonly text: string }>;
}

/** Entries a collection read asks for per page. */
const PAGE = 100;

/** The text of Splunk's error answer: `{"messages":[{"type":"ERROR","text":"…"}]}` (JSON) or `<msg type="ERROR">…</msg>` (XML). */
export function splunkVendorMessage(body: string): string | undefined {
  try {
    const parsed = JSON.parse(body) as { messages?: Array<{ type?: string; text?: string }> };
    const texts = (parsed.messages ?? []).map((m) => m.text).filter((t): t is string => typeof t === 'string' && t !== '');
    if (texts.length > 0) return texts.join('; ');
  } catch {
    // not JSON: Splunk answers XML when output_mode is missing
  }
  const xml = [...body.matchAll(/<msg type="[A-Z]+">([^<]*)<\/msg>/g)].map((m) => m[1]!.trim());
  if (xml.length > 0) return xml.join('; ');
  return body.trim() === '' ? undefined : body.slice(0, 300);
}

export class SplunkClient {
  private readonly http: SiemHttpClient;
  private readonly authorization: string;
  private readonly base: string;

  constructor(
    private readonly connection: SplunkConnection,
    target: string,
  ) {
    this.base = connection.management_url;
    if (connection.token !== undefined) this.authorization = `${connection.token_scheme} ${connection.token}`;
    else this.authorization = `Basic ${Buffer.from(`${connection.username ?? ''}:${connection.password ?? ''}`, 'utf8').toString('base64')}`;
    const secrets = credentialValues(connection);
    if (connection.token === undefined) secrets.push(this.authorization.slice('Basic '.length));
    this.http = new SiemHttpClient({
      kind: 'splunk',
      target,
      caBundle: connection.ca_bundle,
      timeoutMs: connection.timeout_ms,
      maxConcurrency: connection.max_concurrency,
      secrets,
      vendorMessage: (body) => splunkVendorMessage(body),
    });
  }

  /** A path under the target's namespace: `/servicesNS/{owner}/{app}/…`. */
  ns(path: string): string {
    return `/servicesNS/${encodeURIComponent(this.connection.owner)}/${encodeURIComponent(this.connection.app)}/${path}`;
  }

  private url(path: string, query: Readonly<Record<string, string | number>> = {}): string {
    const params = new URLSearchParams({ output_mode: 'json' });
    for (const [k, v] of Object.entries(query)) params.set(k, String(v));
    return `${this.base}${path}?${params.toString()}`;
  }

  private headers(form: boolean): Record<string, string> {
    return { authorization: this.authorization, accept: 'application/json', ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) };
  }

  async get<T>(path: string, query: Readonly<Record<string, string | number>> = {}, options: Pick<HttpRequest, 'accept'> = {}): Promise<{ status: number; body: T }> {
    const res = await this.http.json<T>({ method: 'GET', url: this.url(path, query), headers: this.headers(false), ...options });
    return { status: res.status, body: res.body };
  }

  async post<T>(path: string, fields: Parameters<typeof formBody>[0], options: Pick<HttpRequest, 'accept'> = {}): Promise<{ status: number; body: T }> {
    const res = await this.http.json<T>({ method: 'POST', url: this.url(path), headers: this.headers(true), body: formBody(fields), ...options });
    return { status: res.status, body: res.body };
  }

  async delete(path: string, options: Pick<HttpRequest, 'accept'> = {}): Promise<number> {
    const res = await this.http.request({ method: 'DELETE', url: this.url(path), headers: this.headers(false), ...options });
    return res.status;
  }

  /** Every entry of a collection, page by page until `paging.total` entries were read. */
  async list<TContent>(path: string, query: Readonly<Record<string, string | number>> = {}, options: Pick<HttpRequest, 'accept'> = {}): Promise<Array<SplunkEntry<TContent>>> {
    const out: Array<SplunkEntry<TContent>> = [];
    for (let offset = 0; ;) {
      const { status, body } = await this.get<SplunkFeed<TContent>>(path, { ...query, count: PAGE, offset }, options);
      if (status === 404) return out;
      const entries = body?.entry ?? [];
      out.push(...entries);
      offset += entries.length;
      const total = body?.paging?.total;
      if (entries.length === 0 || total === undefined || offset >= total) return out;
    }
  }

  /**
   * A search run to completion in one request (`POST /services/search/jobs`, `exec_mode=oneshot`)
   * over [earliest, latest) given as epoch seconds; `count=0` returns every result row.
   */
  async oneshot(search: string, window: { earliest: string; latest: string } | null, extra: Readonly<Record<string, string | number>> = {}): Promise<SplunkResults> {
    const { body } = await this.post<SplunkResults>('/services/search/jobs', {
      search,
      exec_mode: 'oneshot',
      count: 0,
      ...(window ? { earliest_time: window.earliest, latest_time: window.latest } : {}),
      ...extra,
    });
    return { results: body?.results ?? [], ...(body?.messages ? { messages: body.messages } : {}) };
  }

  close(): void {
    this.http.close();
  }
}
