import type { ApiDeps } from '../context';
import { defineRoute } from '../http/route';
import { ProblemSchema } from '../http/problem';
import { isoDurationToMs } from '../../config/iso-duration';
import { ruleHealth } from '../../domain/health/rule-health';
import { findHealthSettings, putHealthSettings } from '../../domain/health/health-settings';
import { HealthSettings, PutHealthSettings, RuleHealth, RuleHealthParams, RuleHealthQuery } from './schemas';
import { healthSettingsView, ruleHealthView } from './rule-health.view';

/** A rule's health from recorded alerts, runs, deployments and its target's events; and the tenant's thresholds. */
export function ruleHealthRoutes(deps: ApiDeps) {
  const { db } = deps.database;
  return [
    defineRoute({
      method: 'get',
      path: '/health/rules/{id}',
      operationId: 'ruleHealth',
      summary: "A rule's health over a window: SNR, latency, error rate, noise budget, data quality, trend, live deployments",
      tag: 'health',
      permission: 'rules:read',
      // Reads deployments, alerts and runs of every environment: only the token's count.
      scope: { kind: 'list' },
      params: RuleHealthParams,
      query: RuleHealthQuery,
      responses: {
        200: { description: "The rule's health", schema: RuleHealth },
        404: { description: 'No such rule, or no such target within the token’s environments', schema: ProblemSchema },
      },
      handler: async ({ params, query, auth }) => {
        const health = await ruleHealth(deps, auth, { ruleId: params.id, target: query.target, windowMs: isoDurationToMs(query.window)! });
        return { status: 200, body: ruleHealthView(health, query.window) };
      },
    }),
    defineRoute({
      method: 'get',
      path: '/settings/health',
      operationId: 'getHealthSettings',
      summary: "The tenant's rule-health thresholds (defaults where it set none)",
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'every-environment' },
      responses: { 200: { description: 'The thresholds', schema: HealthSettings } },
      handler: async ({ auth }) => ({ status: 200, body: healthSettingsView(await findHealthSettings(db, auth)) }),
    }),
    defineRoute({
      method: 'put',
      path: '/settings/health',
      operationId: 'putHealthSettings',
      summary: "Set the tenant's rule-health thresholds; fields left out take their defaults",
      tag: 'settings',
      permission: 'admin',
      scope: { kind: 'every-environment' },
      body: PutHealthSettings,
      responses: { 200: { description: 'The thresholds', schema: HealthSettings } },
      handler: async ({ body, auth }) => ({ status: 200, body: healthSettingsView(await putHealthSettings(deps, auth, body)) }),
    }),
  ];
}
