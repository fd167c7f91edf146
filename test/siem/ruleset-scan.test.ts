import { readFileSync } from 'fs';
import type { SigmaRule } from '../../sigma/model';
import { parseRule, parseSigma } from '../../sigma/parse';
import type { CompiledRule, RulesetMember } from '../../siem/adapter';
import { LocalEventStore } from '../../siem/local/event-store';
import { LocalSiemAdapter } from '../../siem/local/local-adapter';
import { numbersSurviveParse } from '../../siem/local/ruleset-scan';
import { compileSigmaForLocal, compileSigmaRulesetForLocal } from '../../siem/local/sigma-compiler';
import { corpusFiles } from '../sigma/support/corpus';
import { generateRulesetEvents } from '../sigma/support/ruleset-events';

/**
 * One read of the new events for many rules (scheduled detection's pass, decision record 0086) must
 * answer, for every rule and cursor, exactly what the rule's own SQL query answers (evaluateSince):
 * same matches in the same order, same counts of events scanned and matched, same truncation.
 */

const TENANT = 'acme';
const TARGET = 'target-a';
const T0 = Date.UTC(2026, 0, 1);

function corpusRules(): SigmaRule[] {
  return corpusFiles().flatMap((path) => {
    const c = parseSigma(readFileSync(path, 'utf8'));
    return c.errors.length > 0 ? [] : c.documents.filter((d): d is SigmaRule => d.kind === 'rule');
  });
}

let store: LocalEventStore;
let adapter: LocalSiemAdapter<SigmaRule>;

beforeEach(async () => {
  store = await LocalEventStore.open({ path: ':memory:' });
  adapter = new LocalSiemAdapter<SigmaRule>({ store, compiler: compileSigmaForLocal, rulesetCompiler: compileSigmaRulesetForLocal });
});
afterEach(() => store.close());

/** Stores events with their logsource (read from `_ls_*` fields, as a feed names it per event); returns the cursor after them. */
async function ingest(
  events: ReadonlyArray<{ event: Record<string, unknown>; logsource?: { product?: string; category?: string; service?: string } }>,
  tenant = TENANT,
): Promise<number> {
  const input = events.map(({ event, logsource }, i) => ({
    ...event,
    ts: T0 + i,
    ...(logsource?.product !== undefined ? { _ls_product: logsource.product } : {}),
    ...(logsource?.category !== undefined ? { _ls_category: logsource.category } : {}),
    ...(logsource?.service !== undefined ? { _ls_service: logsource.service } : {}),
  }));
  const r = await store.ingest(
    tenant,
    TARGET,
    { kind: 'json-array', input },
    { timestampField: 'ts', logsource: { product: { field: '_ls_product' }, category: { field: '_ls_category' }, service: { field: '_ls_service' } } },
  );
  expect(r.rejected).toBe(0);
  return r.cursor;
}

function member(rule: SigmaRule, i: number, cursor: number): RulesetMember<SigmaRule> | null {
  const compiled = adapter.compile(rule);
  if (!compiled.ok) return null;
  const query: CompiledRule = { ruleId: `r${i}`, version: 1, query: compiled.query, ...(compiled.logsource ? { logsource: compiled.logsource } : {}) };
  return { fingerprint: `r${i}`, rule, compiled: query, cursor };
}

/** What each member's own query answers, in the shape the shared read answers (its duration aside). */
async function alone(m: RulesetMember<SigmaRule>, limit: number) {
  const r = await adapter.evaluateSince(TENANT, TARGET, m.compiled, m.cursor, { limit });
  return comparable(r)!;
}

function comparable(
  r: { cursor: number; scanned: number; bytesScanned: number; matched: number; truncated: boolean; events: ReadonlyArray<{ seq: number; eventId: string }> } | null,
) {
  return (
    r && {
      cursor: r.cursor,
      scanned: r.scanned,
      bytesScanned: r.bytesScanned,
      matched: r.matched,
      truncated: r.truncated,
      events: r.events.map((e) => `${e.seq}/${e.eventId}`),
    }
  );
}

describe('many rules over one read of the new events', () => {
  const rules = corpusRules();

  it('answers for every corpus rule exactly what its own SQL query answers, from cursors of its own', async () => {
    const generated = generateRulesetEvents(rules, { seed: 86, noisePerRuleEvent: 1, nearMisses: 1, literalShare: 0.5 });
    const half = Math.floor(generated.length / 2);
    const c1 = await ingest(generated.slice(0, half));
    // Another tenant's events, and the same target's events of another tenant, are never read.
    await ingest(generated.slice(0, 200), 'other-tenant');
    await ingest(generated.slice(half));

    // Cursors: most rules at the first batch's end, some from the start, one past everything.
    const members = rules.map((r, i) => member(r, i, i % 7 === 0 ? 0 : c1)).filter((m): m is RulesetMember<SigmaRule> => m !== null);
    expect(members.length).toBeGreaterThan(400);
    const limit = 3;
    const shared = await adapter.evaluateRulesSince!(TENANT, TARGET, members, { limit });
    let matching = 0;
    const differences: string[] = [];
    for (const [k, m] of members.entries()) {
      const want = await alone(m, limit);
      const got = comparable(shared[k]!);
      if (want.matched > 0) matching++;
      if (JSON.stringify(want) !== JSON.stringify(got)) differences.push(`${m.rule.title}: want ${JSON.stringify(want)} got ${JSON.stringify(got)}`);
    }
    expect(differences.slice(0, 3)).toEqual([]);
    // The events exercise the rules: many match something, and some go past the limit.
    expect(matching).toBeGreaterThan(members.length / 3);
    expect(shared.some((r) => r!.truncated)).toBe(true);
  });

  it('stops at the most events it may read, answers up to there, and leaves out rules whose cursor is past it', async () => {
    const rule = parseRule('title: t\nlogsource: {product: windows}\ndetection: {s: {Image|endswith: evil.exe}, condition: s}\n');
    const events = Array.from({ length: 30 }, (_, i) => ({ event: { Image: i % 3 === 0 ? 'c:\\evil.exe' : 'c:\\good.exe' }, logsource: { product: 'windows' } }));
    const upTo = await ingest(events);
    const early = member(rule, 0, upTo - 30)!;
    const late = member(rule, 1, upTo - 5)!;
    const scan = await store.rulesetSince(
      TENANT,
      TARGET,
      compileSigmaRulesetForLocal([early.rule, late.rule]),
      [early, late].map((m) => ({ where: m.compiled.query, cursor: m.cursor, ...(m.compiled.logsource ? { logsource: m.compiled.logsource } : {}) })),
      { limit: 100, pageSize: 4, maxEvents: 10 },
    );
    // Three pages of four: twelve events read, so the answer goes up to the twelfth.
    const twelfth = upTo - 30 + 12;
    expect(scan[0]).toMatchObject({ cursor: twelfth, scanned: 12, matched: 4, truncated: false });
    expect(scan[0]!.events.map((e) => e.seq)).toEqual([0, 3, 6, 9].map((k) => upTo - 30 + 1 + k));
    expect(scan[1]).toBeNull();
  });

  it('leaves events whose numbers JSON.parse would change to each rule’s SQL, which reads their digits', async () => {
    const rule = parseRule('title: t\nlogsource: {product: windows}\ndetection: {s: {A: 9007199254740993}, condition: s}\n');
    const other = parseRule('title: u\nlogsource: {product: windows}\ndetection: {s: {B: 1.5}, condition: s}\n');
    const store2 = store;
    const r = await store2.ingest(
      TENANT,
      TARGET,
      { kind: 'ndjson', input: '{"ts":1,"A":9007199254740993}\n{"ts":2,"A":9007199254740992}\n{"ts":3,"B":1.5}\n{"ts":4,"B":1.50}\n' },
      { timestampField: 'ts', logsource: { product: 'windows' } },
    );
    const members = [member(rule, 0, 0)!, member(other, 1, 0)!];
    const shared = await adapter.evaluateRulesSince!(TENANT, TARGET, members, { limit: 10 });
    for (const [k, m] of members.entries()) expect(comparable(shared[k]!)).toEqual(await alone(m, 10));
    expect(shared[0]!.events.map((e) => e.event)).toHaveLength(1);
    expect(r.accepted).toBe(4);
  });

  it('reads which numbers survive JSON.parse, outside strings only', () => {
    expect(numbersSurviveParse('{"a":1,"b":-20,"c":1.5,"d":"9007199254740993","e":[0,12]}')).toBe(true);
    expect(numbersSurviveParse('{"a":9007199254740993}')).toBe(false);
    expect(numbersSurviveParse('{"a":1e3}')).toBe(false);
    expect(numbersSurviveParse('{"a":1.50}')).toBe(false);
    expect(numbersSurviveParse('{"a":"x\\"","b":1234567890123456}')).toBe(false);
    expect(numbersSurviveParse('{"a":"1e3 \\\\","b":2}')).toBe(true);
  });

  it('compiles the rules once while the same rules come back', async () => {
    const rule = parseRule('title: t\nlogsource: {product: windows}\ndetection: {s: {Image|endswith: evil.exe}, condition: s}\n');
    let compiled = 0;
    const counting = new LocalSiemAdapter<SigmaRule>({
      store,
      compiler: compileSigmaForLocal,
      rulesetCompiler: (rs) => (compiled++, compileSigmaRulesetForLocal(rs)),
    });
    const upTo = await ingest([{ event: { Image: 'x\\evil.exe' }, logsource: { product: 'windows' } }]);
    const ms = [member(rule, 0, 0)!, member(rule, 1, upTo)!];
    const first = await counting.evaluateRulesSince!(TENANT, TARGET, ms, { limit: 10 });
    await counting.evaluateRulesSince!(TENANT, TARGET, ms, { limit: 10 });
    expect(compiled).toBe(1);
    expect(first.map((f) => f!.matched)).toEqual([1, 0]);
    await counting.evaluateRulesSince!(TENANT, TARGET, [ms[0]!], { limit: 10 });
    expect(compiled).toBe(2);
  });
});
