import type { Database } from '../../db/client';
import { LatestRuleReader, type LatestRuleRow } from '../../domain/rules/latest-rule-reader';

function row(tenantId: string, ruleId: string, version: number): LatestRuleRow {
  return {
    tenant_id: tenantId,
    rule_id: ruleId,
    title: `${tenantId}/${ruleId}`,
    latest_version: version,
    created_at: new Date(0),
    updated_at: new Date(0),
    level: null,
    status: null,
    tags: [],
    logsource: {},
    content: '',
  };
}

/** A database whose table is a map, recording each query it is asked. */
function fakeDatabase(table: Map<string, LatestRuleRow>) {
  const calls: Array<{ name: string; params: unknown[] }> = [];
  const database = {
    kind: 'pglite',
    queryPrepared: async (name: string, _text: string, params: unknown[]) => {
      calls.push({ name, params });
      const pairs: Array<[string, string]> =
        name === 'detflow_get_rule' ? [[params[0] as string, params[1] as string]] : (params[0] as string[]).map((t, i) => [t, (params[1] as string[])[i]!]);
      return pairs.map(([t, r]) => table.get(`${t}/${r}`)).filter((x) => x !== undefined);
    },
  } as unknown as Database;
  return { database, calls };
}

describe('LatestRuleReader', () => {
  it('answers reads asked in the same turn with one query, each with its own tenant and rule', async () => {
    const table = new Map([
      ['t1/a', row('t1', 'a', 1)],
      ['t1/b', row('t1', 'b', 4)],
      ['t2/a', row('t2', 'a', 7)],
    ]);
    const { database, calls } = fakeDatabase(table);
    const reader = new LatestRuleReader(database);
    const results = await Promise.all([reader.read('t1', 'a'), reader.read('t2', 'a'), reader.read('t1', 'a'), reader.read('t1', 'b'), reader.read('t2', 'b')]);
    expect(calls).toHaveLength(1);
    expect(results.map((r) => r && `${r.tenant_id}/${r.rule_id}@${r.latest_version}`)).toEqual(['t1/a@1', 't2/a@7', 't1/a@1', 't1/b@4', undefined]);
  });

  it('never answers a read from a query that ran before it was asked', async () => {
    const table = new Map([['t1/a', row('t1', 'a', 1)]]);
    const { database, calls } = fakeDatabase(table);
    const reader = new LatestRuleReader(database);
    expect((await reader.read('t1', 'a'))!.latest_version).toBe(1);
    table.set('t1/a', row('t1', 'a', 2)); // a new version is pushed
    expect((await reader.read('t1', 'a'))!.latest_version).toBe(2);
    expect(calls.map((c) => c.name)).toEqual(['detflow_get_rule', 'detflow_get_rule']);
  });

  it('rejects every read of a group whose query fails, and recovers', async () => {
    let fail = true;
    const database = {
      queryPrepared: async () => {
        if (fail) throw new Error('database down');
        return [row('t1', 'a', 1)];
      },
    } as unknown as Database;
    const reader = new LatestRuleReader(database);
    const both = [reader.read('t1', 'a'), reader.read('t1', 'b')];
    for (const r of both) await expect(r).rejects.toThrow('database down');
    fail = false;
    expect((await reader.read('t1', 'a'))!.latest_version).toBe(1);
  });
});
