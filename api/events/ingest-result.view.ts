import type { IngestResult } from '../../siem/local/event-store';

export function ingestResultView(target: string, result: IngestResult) {
  return {
    target,
    accepted: result.accepted,
    rejected: result.rejected,
    errors: result.errors,
    errors_truncated: result.errorsTruncated,
    cursor: result.cursor,
    duration_ms: Math.round(result.durationMs),
  };
}
