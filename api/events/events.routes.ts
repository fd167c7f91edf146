import type { z } from 'zod';
import type { ApiDeps } from '../context';
import { defineRoute } from '../http/route';
import { ProblemSchema } from '../http/problem';
import { openEventIntake, storeEvents, type EventIntakeRequest } from '../../domain/targets/event-intake';
import { withEventUpload } from './event-upload';
import { ingestResultView } from './ingest-result.view';
import { IngestBody, IngestQuery, IngestResult } from './schemas';

function intakeRequestOf(query: z.infer<typeof IngestQuery>, maxEventBytes: number | undefined): EventIntakeRequest {
  return {
    target: query.target,
    maxEventBytes,
    timestampField: query.timestamp_field,
    eventIdField: query.event_id_field,
    logsource: {
      product: { fixed: query.product, field: query.product_field },
      category: { fixed: query.category, field: query.category_field },
      service: { fixed: query.service, field: query.service_field },
    },
  };
}

/** Event ingestion into a target's event store (the local SIEM). */
export function eventRoutes(deps: ApiDeps) {
  return [
    defineRoute({
      method: 'post',
      path: '/events',
      operationId: 'ingestEvents',
      summary: 'Ingest events (NDJSON, or a JSON array) into the local event store',
      tag: 'events',
      permission: 'events:write',
      scope: { kind: 'targets', in: 'query', field: 'target' },
      query: IngestQuery,
      rawBody: IngestBody,
      responses: {
        200: {
          description: 'What was stored; bad lines (an event over DETFLOW_MAX_EVENT_KB among them) are listed with their line numbers and nothing else is lost',
          schema: IngestResult,
        },
        404: { description: 'No such target', schema: ProblemSchema },
        409: { description: 'This API process runs apart from the worker that holds the local events (scaled topology); nothing was stored', schema: ProblemSchema },
      },
      handler: async ({ query, auth, req }) => {
        const intake = await openEventIntake(deps, auth, intakeRequestOf(query, deps.config.maxEventBytes));
        const result = await withEventUpload(req, deps.config.ingestLimitBytes, (source) => storeEvents(deps, auth, intake, source));
        return { status: 200, body: ingestResultView(intake.target.name, result) };
      },
    }),
  ];
}
