import type { NextFunction, Request, Response } from 'express';
import { bearerMatches } from '../../lib/metrics/bearer';
import { PROMETHEUS_CONTENT_TYPE } from '../../lib/metrics/prometheus';
import type { ServiceMetrics } from '../../lib/metrics/service-metrics';
import { unauthorized } from '../http/problem';

/** The route label of requests answered before a route was matched (unknown paths, refused tokens, rate limits). */
export const UNMATCHED_ROUTE = 'other';

/** Names the route template a request matched, for its metrics (`/api/v1/rules/{id}`, never the concrete path). */
export function metricsRoute(res: Response, template: string): void {
  res.locals.metricsRoute = template;
}

/** Counts every answered request and its latency, by method, route template and status. */
export function httpMetrics(metrics: ServiceMetrics) {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const route = typeof res.locals.metricsRoute === 'string' ? res.locals.metricsRoute : UNMATCHED_ROUTE;
      metrics.httpRequest(req.method, route, res.statusCode, seconds);
    });
    next();
  };
}

/**
 * GET /metrics: this process's metrics in the Prometheus text format. Open like /healthz unless a
 * token is configured (DETFLOW_METRICS_TOKEN), then only `Authorization: Bearer <token>` reads.
 */
export function metricsEndpoint(metrics: ServiceMetrics, token: string | undefined) {
  return (req: Request, res: Response) => {
    metricsRoute(res, '/metrics');
    if (!bearerMatches(req.headers.authorization, token)) throw unauthorized('GET /metrics needs the metrics token (DETFLOW_METRICS_TOKEN) as a bearer token');
    res.setHeader('Content-Type', PROMETHEUS_CONTENT_TYPE);
    res.setHeader('Cache-Control', 'no-store');
    res.send(metrics.expose());
  };
}
