import { Transform } from 'node:stream';
import type { Request } from 'express';
import { AppError, payloadTooLarge, unsupportedMediaType } from '../http/problem';
import { invalidRequest } from '../../domain/errors';
import type { IngestSource } from '../../siem/local/event-store';

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

/** The request's events by content type: NDJSON streamed through the byte limit, or the parsed JSON array. */
function uploadSource(req: Request, maxBytes: number): IngestSource {
  if (req.is('application/x-ndjson') || req.is('application/jsonl') || req.is('text/plain')) {
    return { kind: 'ndjson', input: req.pipe(byteLimit(maxBytes)) };
  }
  if (req.is('application/json')) {
    if (!Array.isArray(req.body)) throw invalidRequest('A JSON body must be an array of event objects', [{ pointer: '/body', message: 'not an array' }]);
    return { kind: 'json-array', input: req.body as unknown[] };
  }
  throw unsupportedMediaType('Send events as application/x-ndjson (one JSON object per line) or an application/json array');
}

/** Hands the request's events to `store`, answering an upload over the limit with the 413 that stopped it. */
export async function withEventUpload<T>(req: Request, maxBytes: number, store: (source: IngestSource) => Promise<T>): Promise<T> {
  try {
    return await store(uploadSource(req, maxBytes));
  } catch (err) {
    // The upload limit aborts the stream inside the store, which stores nothing of the batch.
    const cause = (err as { cause?: unknown }).cause;
    if (cause instanceof AppError) throw cause;
    throw err;
  }
}
