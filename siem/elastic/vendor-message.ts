/**
 * The message of an Elastic error answer. Kibana answers `{ statusCode, error, message }` (its HTTP
 * layer) or `{ message, status_code }` (the detection engine's own errors); Elasticsearch answers
 * `{ error: { type, reason, root_cause }, status }`, or `{ error: "<text>", status }` for a few
 * transport-level refusals (an unsupported content type).
 */
export function elasticVendorMessage(body: string): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body.trim() ? body.trim().slice(0, 500) : undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const b = parsed as { message?: unknown; error?: unknown };
  if (typeof b.error === 'object' && b.error !== null) {
    const e = b.error as { type?: unknown; reason?: unknown; root_cause?: Array<{ type?: unknown; reason?: unknown }> };
    const reason = typeof e.reason === 'string' ? e.reason : typeof e.root_cause?.[0]?.reason === 'string' ? e.root_cause[0].reason : undefined;
    const type = typeof e.type === 'string' ? e.type : undefined;
    if (reason || type) return [type, reason].filter(Boolean).join(': ').slice(0, 1000);
  }
  if (typeof b.message === 'string' && b.message) return b.message.slice(0, 1000);
  if (typeof b.error === 'string' && b.error) return b.error.slice(0, 1000);
  return undefined;
}
