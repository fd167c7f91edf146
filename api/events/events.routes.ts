import { Transform } from 'node:stream';
import { and, eq } from 'drizzle-orm';
import { z } from 'zod';
import type { ApiDeps } from '../context';
import { targets } from '../../db/schema';
import { defineRoute } from '../http/route';
import { openapi } from '../http/zod-openapi';
import { AppError, ProblemSchema, payloadTooLarge, unsupportedMediaType } from '../http/problem';
import { conflict, insufficientScope, invalidRequest, notFound } from '../../domain/errors';
import { mayUseEnvironment } from '../../domain/tenants/actor';
import { adapterFor, UnsupportedTargetKind } from '../../siem/adapters';
import type { IngestOptions } from '../../siem/local/event-store';

const fieldName = z.string().min(1).max(200);
const IngestQuery = z
  .object({
    target: z.string().min(1).max(63).default('local'),
    timestamp_field: fieldName.default('@timestamp').describe('Field holding the event time (RFC 3339, or epoch s/ms/µs/ns)'),
    event_id_field: fieldName.optional().describe('Field holding a unique event id; generated when absent'),
    product: z.string().min(1).max(100).optional().describe('Fixed logsource.product of every event'),
    category: z.string().min(1).max(100).optional(),
    service: z.string().min(1).max(100).optional(),
    product_field: fieldName.optional().describe('Field holding each event’s logsource.product'),
    category_field: fieldName.optional(),
    service_field: fieldName.optional(),
  })
  .strict();

const IngestResult = openapi(
  z.object({
    target: z.string(),
    accepted: z.number().int(),
    rejected: z.number().int(),
    errors: z.array(z.object({ line: z.number().int(), error: z.string() })).describe('Rejected lines by line number (the first 1000)'),
    errors_truncated: z.boolean(),
    cursor: z.number().int().describe('The store-wide cursor after this batch'),
    duration_ms: z.number(),
  }),
  'IngestResult',
);

function byteLimit(max: number) {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      seen += chunk.length;
      if (seen > max) done(payloadTooLarge(`The upload is larger than ${max} bytes; split it into several requests`));
      else done(null, chunk);
    },
  });
}

/** Event ingestion into a target's event store (the local SIEM). */
export function eventRoutes(deps: ApiDeps) {
  const { db } = deps.database;
  return [
    defineRoute({
      method: 'post',
      path: '/events',
      operationId: 'ingestEvents',
      summary: 'Ingest events (NDJSON, or a JSON array) into the local event store',
      tag: 'events',
      permission: 'events:write',
      query: IngestQuery,
      rawBody: {
        description: 'Events as NDJSON (one JSON object per line, streamed), or a JSON array of objects',
        content: { 'application/x-ndjson': z.string(), 'application/json': z.array(z.record(z.string(), z.unknown())) },
      },
      responses: {
        200: { description: 'What was stored; bad lines are listed with their line numbers and nothing else is lost', schema: IngestResult },
        404: { description: 'No such target', schema: ProblemSchema },
        409: { description: 'This API process runs apart from the worker that holds the local events (scaled topology); nothing was stored', schema: ProblemSchema },
      },
      handler: async ({ query, auth, req }) => {
        const [target] = await db.select().from(targets).where(and(eq(targets.tenantId, auth.tenantId), eq(targets.name, query.target)));
        if (!target) throw notFound(`No target ${query.target} in this tenant`);
        if (!mayUseEnvironment(auth, target.environment)) throw insufficientScope(`This token may not act on environment ${target.environment}`);
        try {
            adapterFor(deps.siem, target.kind);
        } catch (err) {
          if (err instanceof UnsupportedTargetKind) throw invalidRequest(err.message, [{ pointer: '/query/target', message: 'events can be sent to local targets only' }]);
          throw err;
        }
        if (!deps.siem.acceptsLocalEvents) {
          throw conflict(
            `Target ${target.name} is a local target, whose events live in the process that runs the worker; this API runs apart from it (the scaled topology), so it stores no events. Send events to a detflow started with npm start (API and worker in one process); nothing was stored.`,
          );
        }
        const logsource: NonNullable<IngestOptions['logsource']> = {};
        for (const key of ['product', 'category', 'service'] as const) {
          const fixed = query[key];
          const from = query[`${key}_field`];
          if (fixed !== undefined && from !== undefined) throw invalidRequest(`Give ${key} or ${key}_field, not both`, [{ pointer: `/query/${key}_field`, message: 'conflicts' }]);
          if (fixed !== undefined) (logsource as Record<string, unknown>)[key] = fixed;
          if (from !== undefined) (logsource as Record<string, unknown>)[key] = { field: from };
        }
        const options: IngestOptions = {
          timestampField: query.timestamp_field,
          logsource,
          ...(query.event_id_field ? { eventIdField: query.event_id_field } : {}),
        };
        let result;
        try {
          if (req.is('application/x-ndjson') || req.is('application/jsonl') || req.is('text/plain')) {
            result = await deps.siem.localStore.ingest(auth.tenantId, { kind: 'ndjson', input: req.pipe(byteLimit(deps.config.ingestLimitBytes)) }, options);
          } else if (req.is('application/json')) {
            if (!Array.isArray(req.body)) throw invalidRequest('A JSON body must be an array of event objects', [{ pointer: '/body', message: 'not an array' }]);
            result = await deps.siem.localStore.ingest(auth.tenantId, { kind: 'json-array', input: req.body as unknown[] }, options);
          } else {
            throw unsupportedMediaType('Send events as application/x-ndjson (one JSON object per line) or an application/json array');
          }
        } catch (err) {
          // The upload limit aborts the stream inside the store, which stores nothing of the batch.
          const cause = (err as { cause?: unknown }).cause;
          if (cause instanceof AppError) throw cause;
          throw err;
        }
        if (result.accepted === 0 && result.rejected > 0) {
          throw invalidRequest(
            `No event was stored: all ${result.rejected} lines were rejected`,
            result.errors.slice(0, 100).map((e) => ({ pointer: `/body/line/${e.line}`, message: e.error })),
          );
        }
        return {
          status: 200,
          body: {
            target: target.name,
            accepted: result.accepted,
            rejected: result.rejected,
            errors: result.errors,
            errors_truncated: result.errorsTruncated,
            cursor: result.cursor,
            duration_ms: Math.round(result.durationMs),
          },
        };
      },
    }),
  ];
}
