import type { ApiDeps } from '../context';
import { defineRoute } from '../http/route';
import { isoDurationMs } from '../../config/iso-duration';
import { roiReport } from '../../domain/health/roi';
import { roiView } from './roi.view';
import { RoiQuery, RoiReport } from './roi.schemas';

/** The ROI report: noise saved, cost avoided and coverage deltas over a window (formulas in the README, "ROI"). */
export function roiRoutes(deps: ApiDeps) {
  return [
    defineRoute({
      method: 'get',
      path: '/health/roi',
      operationId: 'healthRoi',
      summary: 'Noise saved, cost avoided and ATT&CK coverage deltas over a window ending now',
      tag: 'health',
      permission: 'rules:read',
      // Deployments of every environment, filtered by the token's.
      scope: { kind: 'list' },
      query: RoiQuery,
      responses: { 200: { description: 'The ROI report', schema: RoiReport } },
      handler: async ({ query, auth }) => {
        const report = await roiReport(deps, auth, { windowMs: isoDurationMs(query.window), minObservedMs: isoDurationMs(query.min_observed) });
        return { status: 200, body: roiView(report, { window: query.window, minObserved: query.min_observed }) };
      },
    }),
  ];
}
