import type { FieldPresenceRequest, FieldPresenceResult, SiemAdapter } from '../../siem/adapter';
import type { RuleLogsource } from '../../siem/adapter';

/**
 * Field presence for a whole detection pass: each rule's health check asks which of its fields the
 * recent events of its logsource carry, and on a local target each answer is a scan of those
 * events (a day of them by default). A thousand rules over one logsource would scan the same events
 * a thousand times a pass; here the first rule to ask about a logsource gets the fields every rule
 * of the pass will ask about (announced with `expect`) in one scan, and the others are answered
 * from it. Made per pass and dropped with it, so a figure is never older than the pass.
 */
export class FieldPresenceMemo {
  private readonly wanted = new Map<string, Set<string>>();
  private readonly answers = new Map<string, Promise<{ fields: ReadonlySet<string>; result: FieldPresenceResult }>>();

  /** Fields the pass's rules will ask about on a target's logsource. */
  expect(tenantId: string, targetId: string, logsource: RuleLogsource, fields: readonly string[]): void {
    const key = keyOf(tenantId, targetId, logsource);
    const set = this.wanted.get(key) ?? new Set<string>();
    for (const f of fields) set.add(f);
    this.wanted.set(key, set);
  }

  async fieldPresence(adapter: Pick<SiemAdapter, 'fieldPresence'>, request: FieldPresenceRequest): Promise<FieldPresenceResult> {
    const key = keyOf(request.tenantId, request.targetId, request.logsource);
    const earlier = this.answers.get(key);
    const known = earlier ? await earlier.catch(() => undefined) : undefined;
    if (known && request.fields.every((f) => known.fields.has(f))) return subset(known.result, request.fields);
    const fields: ReadonlySet<string> = new Set([...request.fields, ...(this.wanted.get(key) ?? []), ...(known?.fields ?? [])]);
    const asked = adapter.fieldPresence({ ...request, fields: [...fields] }).then((result) => ({ fields, result }));
    this.answers.set(key, asked);
    return subset((await asked).result, request.fields);
  }
}

function keyOf(tenantId: string, targetId: string, logsource: RuleLogsource): string {
  return JSON.stringify([tenantId, targetId, logsource.product ?? null, logsource.category ?? null, logsource.service ?? null]);
}

function subset(result: FieldPresenceResult, fields: readonly string[]): FieldPresenceResult {
  return { events: result.events, newestEventTime: result.newestEventTime, fields: Object.fromEntries(fields.map((f) => [f, result.fields[f] ?? 0])) };
}
