import { Transform } from 'node:stream';
import type { Request } from 'express';
import { bodyDeadline } from '../http/body-deadline';
import { AppError, payloadTooLarge, requestAborted, unsupportedMediaType } from '../http/problem';
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

/**
 * The request body through the byte limit. The request is piped, not joined in a pipeline, so that
 * a refusal mid-upload (413) leaves the connection open for its answer; what would end the body
 * early ends the upload too, which then stores nothing: the client going away (pipe() alone would
 * leave the upload waiting for ever) and the body deadline passing (408, see body-deadline.ts).
 */
function uploadStream(req: Request, maxBytes: number): Transform {
  const limited = byteLimit(maxBytes);
  const stop = (err: unknown) => {
    if (!limited.destroyed) limited.destroy(err instanceof Error ? err : requestAborted());
  };
  req.once('error', () => stop(requestAborted()));
  req.once('close', () => {
    if (!req.complete) stop(requestAborted());
  });
  const deadline = bodyDeadline(req);
  deadline?.addEventListener('abort', () => stop(deadline.reason), { once: true });
  return req.pipe(limited);
}

/** The request's events by content type: NDJSON streamed through the byte limit, or the parsed JSON array. */
function uploadSource(req: Request, maxBytes: number): IngestSource {
  if (req.is('application/x-ndjson') || req.is('application/jsonl') || req.is('text/plain')) {
    return { kind: 'ndjson', input: uploadStream(req, maxBytes) };
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
