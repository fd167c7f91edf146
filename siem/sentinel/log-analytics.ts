import { SiemRequestError } from '../remote/errors';
import type { SiemHttpClient } from '../remote/http-client';
import type { AzureTokenProvider } from './azure-token';
import { scopeOf, type SentinelConnection } from './connection';

/**
 * The Log Analytics query API: `POST {host}/v1/workspaces/{workspaceId}/query` with
 * `{ query, timespan }`, answered `{ tables: [{ name, columns: [{ name, type }], rows }] }`
 * (learn.microsoft.com/azure/azure-monitor/logs/api/request-format, .../api/response-format).
 * Rows come back as records keyed by column name; datetimes stay ISO strings.
 */

export type QueryRow = Record<string, unknown>;

interface QueryAnswer {
  readonly tables?: ReadonlyArray<{ readonly name: string; readonly columns: ReadonlyArray<{ readonly name: string; readonly type: string }>; readonly rows: unknown[][] }>;
  /** A partial failure: the service answered 200 but could not finish the query. */
  readonly error?: { readonly code?: string; readonly message?: string };
}

export class LogAnalyticsQuery {
  private readonly scope: string;
  private readonly url: string;

  constructor(
    private readonly http: SiemHttpClient,
    private readonly tokens: AzureTokenProvider,
    connection: SentinelConnection,
    private readonly target: string,
  ) {
    this.scope = scopeOf(connection.log_analytics_url);
    this.url = `${connection.log_analytics_url}/v1/workspaces/${encodeURIComponent(connection.workspace_id)}/query`;
  }

  /** Runs a KQL query; `timespan` bounds the TimeGenerated of every workspace table it reads. */
  async rows(query: string, timespan?: { from: Date; to: Date }): Promise<QueryRow[]> {
    const body = JSON.stringify({ query, ...(timespan ? { timespan: `${timespan.from.toISOString()}/${timespan.to.toISOString()}` } : {}) });
    const res = await this.tokens.authorized(this.scope, (authorization) =>
      this.http.json<QueryAnswer>({
        method: 'POST',
        url: this.url,
        headers: { authorization, 'content-type': 'application/json', accept: 'application/json' },
        body,
      }),
    );
    const answer = res.body;
    if (answer?.error) {
      throw new SiemRequestError(
        'sentinel',
        'unavailable',
        `sentinel target ${this.target}: the query answered partial results: ${answer.error.message ?? answer.error.code ?? 'no message'}`,
        {
          status: res.status,
          ...(answer.error.message ? { vendorMessage: answer.error.message } : {}),
        },
      );
    }
    const table = answer?.tables?.find((t) => t.name === 'PrimaryResult') ?? answer?.tables?.[0];
    if (!table) throw new SiemRequestError('sentinel', 'unavailable', `sentinel target ${this.target}: the query answered no table`, { status: res.status });
    return table.rows.map((row) => Object.fromEntries(table.columns.map((c, i) => [c.name, row[i]])));
  }
}

/** A KQL string literal that means exactly `text` (verbatim form: only `"` is doubled). */
export function kqlLiteral(text: string): string {
  return `@"${text.replace(/"/g, '""')}"`;
}

/** A KQL datetime literal. */
export function kqlDatetime(at: Date): string {
  return `datetime(${at.toISOString()})`;
}
