import { SiemRequestError } from '../remote/errors';
import type { SiemHttpClient } from '../remote/http-client';
import type { AzureTokenProvider } from './azure-token';
import { scopeOf, type SentinelConnection } from './connection';

/**
 * Sentinel analytics rules through Azure Resource Manager, as the SecurityInsights REST API
 * specifies them (Azure/azure-rest-api-specs, specification/securityinsights/resource-manager/
 * Microsoft.SecurityInsights/stable/<api-version>/AlertRules.json: AlertRules_List, _Get,
 * _CreateOrUpdate, _Delete). Only `Scheduled` rules are written; other kinds are listed as they are.
 */

/** Sentinel's ATT&CK tactic names (AlertTypes.json `AttackTactic`). */
export type SentinelTactic =
  | 'Reconnaissance'
  | 'ResourceDevelopment'
  | 'InitialAccess'
  | 'Execution'
  | 'Persistence'
  | 'PrivilegeEscalation'
  | 'DefenseEvasion'
  | 'CredentialAccess'
  | 'Discovery'
  | 'LateralMovement'
  | 'Collection'
  | 'Exfiltration'
  | 'CommandAndControl'
  | 'Impact'
  | 'PreAttack'
  | 'ImpairProcessControl'
  | 'InhibitResponseFunction';

export type SentinelSeverity = 'Informational' | 'Low' | 'Medium' | 'High';

/** ScheduledAlertRuleProperties: what detflow writes (required ones, and the few optional it sets). */
export interface ScheduledRuleProperties {
  readonly displayName: string;
  readonly description: string;
  readonly severity: SentinelSeverity;
  readonly enabled: boolean;
  readonly query: string;
  readonly queryFrequency: string;
  readonly queryPeriod: string;
  readonly triggerOperator: 'GreaterThan';
  readonly triggerThreshold: number;
  readonly suppressionDuration: string;
  readonly suppressionEnabled: boolean;
  readonly tactics: readonly SentinelTactic[];
  readonly techniques: readonly string[];
}

/** An alert rule as ARM returns it (any kind; properties are read loosely). */
export interface AlertRuleResource {
  readonly id?: string;
  readonly name: string;
  readonly type?: string;
  readonly kind: string;
  readonly etag?: string;
  readonly properties: {
    readonly displayName?: string;
    readonly description?: string;
    readonly enabled?: boolean;
    readonly query?: string;
    readonly lastModifiedUtc?: string;
    readonly [key: string]: unknown;
  };
}

interface AlertRulesList {
  readonly value: AlertRuleResource[];
  readonly nextLink?: string;
}

/** Pages followed at most when listing (a safety bound against a nextLink loop). */
const MAX_PAGES = 1000;

export class ArmAlertRules {
  private readonly scope: string;
  private readonly base: string;

  constructor(
    private readonly http: SiemHttpClient,
    private readonly tokens: AzureTokenProvider,
    private readonly connection: SentinelConnection,
    private readonly target: string,
  ) {
    const c = connection;
    this.scope = scopeOf(c.arm_url);
    this.base =
      `${c.arm_url}/subscriptions/${encodeURIComponent(c.subscription_id)}/resourceGroups/${encodeURIComponent(c.resource_group)}` +
      `/providers/Microsoft.OperationalInsights/workspaces/${encodeURIComponent(c.workspace_name)}/providers/Microsoft.SecurityInsights/alertRules`;
  }

  /** The ARM resource id of a rule of this workspace (what SentinelHealth names it by). */
  resourcePath(name: string): string {
    return `${this.base.slice(this.connection.arm_url.length)}/${encodeURIComponent(name)}`;
  }

  async get(name: string): Promise<AlertRuleResource | null> {
    const res = await this.call<AlertRuleResource>('GET', this.url(name), undefined, [404]);
    return res.status === 404 ? null : res.body;
  }

  /** Every rule of the workspace, following `nextLink` (x-ms-pageable). */
  async list(): Promise<AlertRuleResource[]> {
    const rules: AlertRuleResource[] = [];
    let next: string | undefined = `${this.base}?api-version=${encodeURIComponent(this.connection.api_version)}`;
    for (let page = 0; next !== undefined; page++) {
      if (page >= MAX_PAGES) throw new SiemRequestError('sentinel', 'unavailable', `sentinel target ${this.target}: alert rules list kept paging past ${MAX_PAGES} pages`);
      const res: { body: AlertRulesList } = await this.call<AlertRulesList>('GET', next);
      rules.push(...(res.body?.value ?? []));
      next = res.body?.nextLink ? this.sameOrigin(res.body.nextLink) : undefined;
    }
    return rules;
  }

  /** AlertRules_CreateOrUpdate: 201 created, 200 updated. `etag` makes it conditional on the version read. */
  async put(name: string, properties: ScheduledRuleProperties, etag: string | undefined): Promise<AlertRuleResource> {
    const body = JSON.stringify({ kind: 'Scheduled', ...(etag ? { etag } : {}), properties });
    return (await this.call<AlertRuleResource>('PUT', this.url(name), body)).body;
  }

  /** AlertRules_Delete: 200 deleted, 204 there was nothing to delete. */
  async delete(name: string): Promise<boolean> {
    const res = await this.call('DELETE', this.url(name), undefined, [404]);
    return res.status === 200;
  }

  private url(name: string): string {
    return `${this.base}/${encodeURIComponent(name)}?api-version=${encodeURIComponent(this.connection.api_version)}`;
  }

  /** A nextLink carries the bearer token: it is followed only on the configured ARM host. */
  private sameOrigin(link: string): string {
    let url: URL;
    try {
      url = new URL(link);
    } catch {
      throw new SiemRequestError('sentinel', 'unavailable', `sentinel target ${this.target}: ARM answered a nextLink that is not a URL`);
    }
    if (url.origin !== new URL(this.connection.arm_url).origin) {
      throw new SiemRequestError('sentinel', 'unavailable', `sentinel target ${this.target}: ARM answered a nextLink on another host (${url.origin}); not followed`);
    }
    return link;
  }

  private call<T>(method: 'GET' | 'PUT' | 'DELETE', url: string, body?: string, accept?: readonly number[]) {
    return this.tokens.authorized(this.scope, (authorization) =>
      this.http.json<T>({
        method,
        url,
        headers: { authorization, accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { body } : {}),
        ...(accept ? { accept } : {}),
      }),
    );
  }
}
