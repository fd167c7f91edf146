import { isSiemRequestError, SiemRequestError } from '../remote/errors';
import type { SiemHttpClient } from '../remote/http-client';

/**
 * The Elasticsearch REST calls the adapter makes: ES|QL (`POST /_query`), a fixture index's life
 * (`PUT /<index>`, `POST /<index>/_bulk`, `DELETE /<index>`) and a search of the alerts index.
 * Sent through the target's SiemHttpClient with `Authorization: ApiKey …` and JSON (NDJSON for
 * bulk) content types; see docs/decisions/0064 for why not the official client.
 */

export interface EsqlColumn {
  readonly name: string;
  readonly type: string;
}

/** An ES|QL answer as rows of objects keyed by column name. */
export interface EsqlResult {
  readonly columns: readonly EsqlColumn[];
  readonly rows: ReadonlyArray<Record<string, unknown>>;
}

/** Query DSL range filter on `@timestamp` over [from, to), as `_query`'s `filter` takes it. */
export function timeFilter(from: Date, to?: Date): Record<string, unknown> {
  return { range: { '@timestamp': { gte: from.toISOString(), ...(to ? { lt: to.toISOString() } : {}), format: 'strict_date_optional_time' } } };
}

export interface AlertsSearchAnswer {
  hits: { total: { value: number; relation: string } };
  aggregations?: {
    per_day?: { buckets: Array<{ key: number; key_as_string?: string; doc_count: number }> };
    first?: { value: number | null };
    last?: { value: number | null };
  };
}

export class EsClient {
  constructor(
    private readonly http: SiemHttpClient,
    private readonly base: string,
    private readonly authorization: string,
  ) {}

  private headers(contentType = 'application/json'): Record<string, string> {
    return { authorization: this.authorization, 'content-type': contentType, accept: 'application/json' };
  }

  /**
   * Runs an ES|QL query; `filter` (Query DSL) bounds the documents FROM reads, the way Kibana's own
   * ES|QL rule executor bounds a run's time range. A FROM naming no existing index answers null.
   */
  async esql(query: string, filter?: Record<string, unknown>): Promise<EsqlResult | null> {
    try {
      const res = await this.http.json<{ columns: EsqlColumn[]; values: unknown[][] }>({
        method: 'POST',
        url: `${this.base}/_query`,
        headers: this.headers(),
        body: JSON.stringify({ query, ...(filter ? { filter } : {}) }),
      });
      const columns = res.body.columns;
      return { columns, rows: res.body.values.map((v) => Object.fromEntries(columns.map((c, i) => [c.name, v[i] ?? null]))) };
    } catch (err) {
      // ES|QL refuses a FROM whose patterns match no index; for a search, that is no events.
      if (isSiemRequestError(err) && err.details.status === 400 && /Unknown index/i.test(err.details.vendorMessage ?? '')) return null;
      throw err;
    }
  }

  async createIndex(index: string, mappings: Record<string, unknown>): Promise<void> {
    await this.http.json({ method: 'PUT', url: `${this.base}/${encodeURIComponent(index)}`, headers: this.headers(), body: JSON.stringify({ mappings }) });
  }

  /** Indexes documents and refreshes, so that a search right after sees them; throws when one is refused. */
  async bulkIndex(index: string, docs: readonly Record<string, unknown>[]): Promise<void> {
    const body = docs.map((d) => `${JSON.stringify({ index: {} })}\n${JSON.stringify(d)}\n`).join('');
    const res = await this.http.json<{ errors: boolean; items: Array<{ index?: { status: number; error?: { type?: string; reason?: string } } }> }>({
      method: 'POST',
      url: `${this.base}/${encodeURIComponent(index)}/_bulk?refresh=true`,
      headers: this.headers('application/x-ndjson'),
      body,
    });
    if (res.body.errors) {
      const failed = res.body.items.find((i) => i.index?.error)?.index?.error;
      throw new SiemRequestError('elastic', 'rejected', `Elasticsearch refused a fixture event: ${failed?.type ?? 'error'}: ${failed?.reason ?? 'no reason given'}`);
    }
  }

  async deleteIndex(index: string): Promise<void> {
    await this.http.request({
      method: 'DELETE',
      url: `${this.base}/${encodeURIComponent(index)}`,
      headers: { authorization: this.authorization, accept: 'application/json' },
      accept: [404],
    });
  }

  async search(index: string, body: Record<string, unknown>): Promise<AlertsSearchAnswer | null> {
    const res = await this.http.json<AlertsSearchAnswer>({
      method: 'POST',
      url: `${this.base}/${encodeURIComponent(index)}/_search`,
      headers: this.headers(),
      body: JSON.stringify(body),
      accept: [404],
    });
    return res.status === 404 ? null : res.body;
  }
}
