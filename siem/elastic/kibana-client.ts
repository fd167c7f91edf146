import type { SiemHttpClient } from '../remote/http-client';
import type { EsqlRuleBody } from './rule-body';

/**
 * Kibana's detection engine API (`/api/detection_engine/rules`, API version 2023-10-31) and the
 * alerting API's rule read, in one Kibana space. Kibana has no maintained Node client; requests go
 * through the target's SiemHttpClient (CA bundle, timeout, concurrency cap, redacted failures).
 *
 * Every request carries `Authorization: ApiKey …` and `elastic-api-version: 2023-10-31`; every
 * request that is not a GET carries `kbn-xsrf: true` (Kibana refuses it otherwise) and a JSON body.
 */

export const KIBANA_API_VERSION = '2023-10-31';
/** Rules per page when listing (Kibana's default is 20; it accepts more). */
const PAGE_SIZE = 100;

/** A detection rule as Kibana answers it (`RuleResponse`); only what the adapter reads is typed. */
export interface KibanaRule {
  id: string;
  rule_id: string;
  name: string;
  description: string;
  type: string;
  query?: string;
  enabled: boolean;
  tags: string[];
  updated_at: string;
  created_at: string;
  execution_summary?: { last_execution?: { date?: string; status?: string; message?: string } };
}

/** The alerting framework's view of a rule (`GET /api/alerting/rule/{id}`): its run monitoring. */
export interface AlertingRule {
  id: string;
  monitoring?: {
    run?: {
      history?: Array<{ success: boolean; timestamp: number; duration?: number; outcome?: string }>;
      last_run?: { timestamp?: string };
    };
  };
  last_run?: { outcome?: string; outcome_msg?: string[] | null } | null;
}

export class KibanaClient {
  constructor(
    private readonly http: SiemHttpClient,
    private readonly base: string,
    private readonly authorization: string,
  ) {}

  /** `https://kibana/api/…`, or `https://kibana/s/<space>/api/…` in a space other than the default. */
  static base(kibanaUrl: string, space: string): string {
    return space === 'default' ? kibanaUrl : `${kibanaUrl}/s/${encodeURIComponent(space)}`;
  }

  private headers(write: boolean): Record<string, string> {
    return {
      authorization: this.authorization,
      'elastic-api-version': KIBANA_API_VERSION,
      accept: 'application/json',
      ...(write ? { 'kbn-xsrf': 'true', 'content-type': 'application/json' } : {}),
    };
  }

  /** The rule with this `rule_id`, or null when Kibana has none. */
  async getRule(ruleId: string): Promise<KibanaRule | null> {
    const res = await this.http.json<KibanaRule>({
      method: 'GET',
      url: `${this.base}/api/detection_engine/rules?${new URLSearchParams({ rule_id: ruleId })}`,
      headers: this.headers(false),
      accept: [404],
    });
    return res.status === 404 ? null : res.body;
  }

  /** Creates the rule; null when a rule with its `rule_id` exists already (409). */
  async createRule(body: EsqlRuleBody): Promise<KibanaRule | null> {
    const res = await this.http.json<KibanaRule>({
      method: 'POST',
      url: `${this.base}/api/detection_engine/rules`,
      headers: this.headers(true),
      body: JSON.stringify(body),
      accept: [409],
    });
    return res.status === 409 ? null : res.body;
  }

  /** Replaces the rule with this body's `rule_id` (every field not given returns to its default). */
  async updateRule(body: EsqlRuleBody): Promise<KibanaRule> {
    return (await this.http.json<KibanaRule>({ method: 'PUT', url: `${this.base}/api/detection_engine/rules`, headers: this.headers(true), body: JSON.stringify(body) })).body;
  }

  async setEnabled(ruleId: string, enabled: boolean): Promise<KibanaRule> {
    return (
      await this.http.json<KibanaRule>({
        method: 'PATCH',
        url: `${this.base}/api/detection_engine/rules`,
        headers: this.headers(true),
        body: JSON.stringify({ rule_id: ruleId, enabled }),
      })
    ).body;
  }

  /** Deletes the rule; false when it was gone already. */
  async deleteRule(ruleId: string): Promise<boolean> {
    const res = await this.http.request({
      method: 'DELETE',
      url: `${this.base}/api/detection_engine/rules?${new URLSearchParams({ rule_id: ruleId })}`,
      headers: this.headers(true),
      accept: [404],
    });
    return res.status !== 404;
  }

  /** Every rule matching a `_find` filter (KQL on `alert.attributes.*`), all pages; every rule of the space without one. */
  async findRules(filter?: string): Promise<KibanaRule[]> {
    const out: KibanaRule[] = [];
    for (let page = 1; ; page++) {
      const params = new URLSearchParams({ page: String(page), per_page: String(PAGE_SIZE), sort_field: 'created_at', sort_order: 'asc' });
      if (filter) params.set('filter', filter);
      const res = await this.http.json<{ page: number; perPage: number; total: number; data: KibanaRule[] }>({
        method: 'GET',
        url: `${this.base}/api/detection_engine/rules/_find?${params}`,
        headers: this.headers(false),
      });
      out.push(...res.body.data);
      if (res.body.data.length === 0 || page * PAGE_SIZE >= res.body.total) return out;
    }
  }

  /** The alerting framework's record of the rule (by its object `id`), with its recent runs. */
  async alertingRule(id: string): Promise<AlertingRule | null> {
    const res = await this.http.json<AlertingRule>({
      method: 'GET',
      url: `${this.base}/api/alerting/rule/${encodeURIComponent(id)}`,
      headers: this.headers(false),
      accept: [404],
    });
    return res.status === 404 ? null : res.body;
  }
}
