import type { StoredEvents } from '../../domain/targets/event-intake';

export function ingestResultView(target: string, result: StoredEvents) {
  return {
    target,
    accepted: result.accepted,
    rejected: result.rejected,
    logsources: result.logsources.map((l) => ({ product: l.product, category: l.category, service: l.service, events: l.events })),
    logsources_truncated: result.logsourcesTruncated,
    warnings: result.warnings.map((w) => ({ code: w.code, events: w.events, message: w.message })),
    errors: result.errors,
    errors_truncated: result.errorsTruncated,
    cursor: result.cursor,
    duration_ms: Math.round(result.durationMs),
  };
}
