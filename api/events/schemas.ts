import { z } from 'zod';
import { openapi } from '../http/zod-openapi';

const fieldName = z.string().min(1).max(200);
export const IngestQuery = z
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

export const IngestResult = openapi(
  z.object({
    target: z.string(),
    accepted: z.number().int(),
    rejected: z.number().int(),
    logsources: z
      .array(
        z.object({
          product: z.string().nullable(),
          category: z.string().nullable(),
          service: z.string().nullable(),
          events: z.number().int().describe('Events of this request stored with this logsource'),
        }),
      )
      .describe(
        'The stored events by logsource (lower-cased, as rules match it; null where none was given), most events first: the first 100, plus the events without any logsource whenever there are some. Their events add up to accepted unless logsources_truncated',
      ),
    logsources_truncated: z.boolean(),
    warnings: z
      .array(
        z.object({
          code: z.enum(['no_logsource']).describe('no_logsource: events stored with no product, category or service, which no rule with a logsource matches'),
          events: z.number().int(),
          message: z.string().describe('What happened and how to fix it'),
        }),
      )
      .describe('What was stored but will not work as expected; nothing was refused for it'),
    errors: z.array(z.object({ line: z.number().int(), error: z.string() })).describe('Rejected lines by line number (the first 1000)'),
    errors_truncated: z.boolean(),
    cursor: z.number().int().describe('The store-wide cursor after this batch'),
    duration_ms: z.number(),
  }),
  'IngestResult',
);

/** The upload's media types: NDJSON streamed line by line, or a JSON array. */
export const IngestBody = {
  description: 'Events as NDJSON (one JSON object per line, streamed), or a JSON array of objects',
  content: { 'application/x-ndjson': z.string(), 'application/json': z.array(z.record(z.string(), z.unknown())) },
};
