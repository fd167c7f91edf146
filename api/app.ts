import { RequestDrain } from './http/drain';
import { readinessEndpoint } from './readiness';
import { driftRoutes } from './drift/drift.routes';
import express, { type Request, type Response } from 'express';
import type { ApiDeps } from './context';
import { AuditWriter, auditRequests, auditSubject } from './audit/audit-recorder';
import { parseParams, parseRequest, expressPath, type RouteSpec } from './http/route';
import { requestLog } from './http/request-log';
import { bodyDeadlines, DEFAULT_BODY_TIMEOUT_SECONDS } from './http/body-deadline';
import { identifyAndLimit, literalPathFirst, methodNotAllowed, problemHandler, requireJsonBody, requireUtf8, unmatchedRoute } from './http/pipeline';
import { insufficientScope } from '../domain/errors';
import { buildOpenApiDocument } from './openapi';
import { apiReference } from './docs/reference-page';
import { consoleSite } from './console/console-site';
import { sessionRoutes } from './auth/session.routes';
import { enforceScope, namedInRequest } from './http/scope';
import { TokenCache } from './auth/token-cache';
import { FailureThrottle } from './auth/failure-throttle';
import { createRequestCounter } from './limits/request-counter';
import { apiKeyRoutes } from './settings/api-keys.routes';
import { tenantRoutes } from './settings/tenants.routes';
import { auditRoutes } from './settings/audit.routes';
import { webhookRoutes } from './settings/webhook.routes';
import { backupRoutes } from './settings/backup.routes';
import { slackIntegrationRoutes } from './integrations/slack.routes';
import { SLACK_INTERACTIONS_PATH, slackInteractionHandlers } from './integrations/slack-interactions';
import { mattermostIntegrationRoutes } from './integrations/mattermost.routes';
import { MATTERMOST_ACTIONS_PATH, mattermostActionHandlers } from './integrations/mattermost-actions';
import { targetRoutes } from './settings/targets.routes';
import { eventRoutes } from './events/events.routes';
import { alertRoutes } from './alerts/alerts.routes';
import { ruleRoutes } from './rules/rules.routes';
import { lintRoutes } from './rules/lint.routes';
import { ruleTestRoutes } from './rules/test.routes';
import { deployRoutes } from './deployments/deploy.routes';
import { approvalRoutes } from './approvals/approvals.routes';
import { rollbackRoutes } from './deployments/rollback.routes';
import { promoteRoutes } from './deployments/promote.routes';
import { runRoutes } from './runs';
import { roiRoutes } from './health/roi.routes';
import { dashboardRoutes } from './health/dashboard.routes';
import { ruleHealthRoutes } from './health/rule-health.routes';
import { httpMetrics, metricsEndpoint, metricsRoute } from './metrics/metrics';
import { createServiceMetrics } from '../lib/metrics/service-metrics';
import { CLI_TARBALL_PATH, serveCliTarball } from './cli-package/cli-tarball';

export const API_BASE = '/api/v1';

export type App = {
  app: express.Express;
  routes: RouteSpec<any, any, any>[];
  /** Resolves when every audit row and request count held in memory is written. */
  flush(): Promise<void>;
  /** The handlers still running, for a shutdown that lets them finish. */
  drain: RequestDrain;
};

export function buildApp(given: ApiDeps): App {
  // One registry per process: the process passes it (the worker in the same process counts into it
  // too); an app built without one still exposes its own.
  const metrics = given.metrics ?? createServiceMetrics();
  const deps: ApiDeps = { ...given, metrics };
  const now = deps.now ?? (() => new Date());
  const auditWriter = new AuditWriter(deps.database, deps.logger);
  const tokenCache = new TokenCache();
  const failureThrottle = new FailureThrottle();
  const requestCounter = createRequestCounter(deps.database, deps.logger);
  const drain = new RequestDrain();
  const flush = async () => {
    await Promise.all([auditWriter.flush(), requestCounter.flush()]);
  };

  const routes: RouteSpec<any, any, any>[] = [
    ...ruleRoutes(deps),
    ...lintRoutes(deps),
    ...ruleTestRoutes(deps),
    ...deployRoutes(deps),
    ...approvalRoutes(deps),
    ...rollbackRoutes(deps),
    ...promoteRoutes(deps),
    ...driftRoutes(deps),
    ...runRoutes(deps),
    ...apiKeyRoutes(deps, tokenCache),
    ...tenantRoutes(deps, tokenCache),
    ...auditRoutes(deps, () => auditWriter.flush()),
    ...webhookRoutes(deps),
    ...backupRoutes(deps),
    ...slackIntegrationRoutes(deps),
    ...mattermostIntegrationRoutes(deps),
    ...targetRoutes(deps),
    ...eventRoutes(deps),
    ...alertRoutes(deps),
    ...roiRoutes(deps),
    ...dashboardRoutes(deps),
    ...ruleHealthRoutes(deps),
    ...sessionRoutes(),
  ];

  const app = express();
  app.disable('x-powered-by');
  // Weak ETags cost a hash of every body and no client of this API revalidates with them.
  app.set('etag', false);
  app.set('query parser', 'simple');
  app.use(requestLog(deps.logger));
  app.use(drain.refuseWhileDraining());
  app.use(httpMetrics(metrics));
  app.use(bodyDeadlines(deps.config.bodyTimeoutSeconds ?? DEFAULT_BODY_TIMEOUT_SECONDS));

  // The API reference for people, from the OpenAPI document below (public, like the document).
  app.use(apiReference(`${API_BASE.slice(1)}/openapi.json`));
  app.use(consoleSite());

  // Liveness, readiness and metrics for orchestrators: no rate limit, no audit; no auth either,
  // except /metrics when DETFLOW_METRICS_TOKEN is set.
  app.get('/metrics', metricsEndpoint(metrics, deps.config.metricsToken));
  app.get('/healthz', (_req, res) => {
    metricsRoute(res, '/healthz');
    res.json({ status: 'ok' });
  });
  if (deps.readiness) {
    const ready = readinessEndpoint(deps.readiness);
    app.get('/readyz', (req, res) => {
      metricsRoute(res, '/readyz');
      ready(req, res);
    });
  }

  // The CLI that matches this service, for CI jobs to install (no token: it holds no secret).
  app.get(CLI_TARBALL_PATH, serveCliTarball);

  const api = express.Router();
  api.use(auditRequests(auditWriter));

  const serverUrl = deps.config.publicUrl ? `${deps.config.publicUrl.replace(/\/$/, '')}${API_BASE}` : API_BASE;
  // The contract itself is public (no secrets in it), but still counted and audited.
  for (const [file, version] of [
    ['/openapi.json', '3.0.3'],
    ['/openapi-3.1.json', '3.1.0'],
  ] as const) {
    const document = buildOpenApiDocument(routes, serverUrl, version);
    api.get(file, identifyAndLimit(deps.database, tokenCache, failureThrottle, requestCounter, now, { requireAuth: false }), (_req, res) => {
      auditSubject(res).route = file;
      metricsRoute(res, `${API_BASE}${file}`);
      res.json(document);
    });
  }

  // Slack's interaction callbacks carry no token: their signature over the raw body authenticates them.
  api.post(
    SLACK_INTERACTIONS_PATH,
    identifyAndLimit(deps.database, tokenCache, failureThrottle, requestCounter, now, { requireAuth: false }),
    ...slackInteractionHandlers(deps),
  );
  // Mattermost's button callbacks carry no token either: the token in the button's context authenticates them.
  api.post(
    MATTERMOST_ACTIONS_PATH,
    identifyAndLimit(deps.database, tokenCache, failureThrottle, requestCounter, now, { requireAuth: false }),
    ...mattermostActionHandlers(deps),
  );

  api.use(identifyAndLimit(deps.database, tokenCache, failureThrottle, requestCounter, now, { requireAuth: true }));
  api.use(express.json({ limit: deps.config.bodyLimit, strict: true, type: ['application/json', 'application/*+json'], verify: requireUtf8 }));

  const literalFirst = literalPathFirst(routes);
  for (const spec of routes) {
    api[spec.method](expressPath(spec.path), (req: Request, res: Response) => drain.track(() => handle(spec, req, res)));
  }
  async function handle(spec: RouteSpec<any, any, any>, req: Request, res: Response) {
    literalFirst(req, spec);
    auditSubject(res).route = spec.path;
    metricsRoute(res, `${API_BASE}${spec.path}`);
    const auth = req.auth!;
    if (spec.permission && !auth.permissions.has(spec.permission)) {
      throw insufficientScope(`This operation needs the ${spec.permission} permission`);
    }
    if (spec.body) requireJsonBody(req);
    // What the path names first (an object outside the token's tenant or environments is not found,
    // whatever the body holds), then what the query and body name.
    const scopes = [spec.scope].flat();
    const params = parseParams(spec, req);
    for (const scope of scopes.filter((s) => !namedInRequest(s))) await enforceScope(deps.database.db, scope, { params, query: undefined, body: undefined }, auth);
    const input = parseRequest(spec, req, params);
    for (const scope of scopes.filter(namedInRequest)) await enforceScope(deps.database.db, scope, input, auth);
    const result = await spec.handler({ ...input, auth, req, res });
    for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
    if (result.body === undefined) res.status(result.status).end();
    else res.status(result.status).json(result.body);
  }
  api.use(methodNotAllowed(routes));
  api.use(unmatchedRoute);

  app.use(API_BASE, api);
  app.use(unmatchedRoute);
  app.use(problemHandler(deps.logger));
  return { app, routes, flush, drain };
}
