import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { cliEnv, runCli, startCliTestBed, stopCliTestBed } from '../support/cli';
import type { TestService } from '../support/harness';

async function detflow(svc: TestService, args: string[]): Promise<{ code: number; out: string }> {
  const { code, combined } = await runCli(args, { env: { ...process.env, NODE_OPTIONS: '', ...cliEnv(svc) } });
  return { code, out: combined };
}

const event = (i: number) => ({ '@timestamp': `2026-11-20T10:00:${String(i).padStart(2, '0')}Z`, Image: `C:\\t\\p${i}.exe`, EventID: 1 });

describe('detflow ingest', () => {
  let svc: TestService;
  let dir: string;
  beforeAll(async () => {
    ({ svc, dir } = await startCliTestBed('detflow-ingest-'));
  });
  afterAll(() => stopCliTestBed({ svc, dir }));

  it('sends JSONL in batches and names rejected lines by their line in the file', async () => {
    const file = path.join(dir, 'events.jsonl');
    const lines = [event(1), event(2), 'not json', event(4), { Image: 'no time' }, event(6)].map((e) => (typeof e === 'string' ? e : JSON.stringify(e)));
    fs.writeFileSync(file, lines.join('\n') + '\n');
    const res = await detflow(svc, ['ingest', file, '--product', 'windows', '--batch-lines', '2']);
    expect(res.code).toBe(1);
    expect(res.out).toContain(`${file}: 4 accepted, 2 rejected`);
    expect(res.out).toContain(`${file}:3:`);
    expect(res.out).toContain(`${file}:5:`);
    expect(res.out).toContain(`${file}: 4 stored with logsource product=windows\n`);
    expect(res.out).not.toContain('warning');
    expect((await svc.siem.localStore.tenantStats('default')).events).toBe(4);
  });

  it('sends JSON arrays and Parquet files', async () => {
    const array = path.join(dir, 'events.json');
    fs.writeFileSync(array, JSON.stringify([event(10), event(11), event(12)]));
    const parquet = path.join(dir, 'events.parquet');
    const instance = await DuckDBInstance.create(':memory:');
    const con = await instance.connect();
    await con.run(`COPY (SELECT '2026-11-21T08:00:00Z' AS "@timestamp", 'C:\\x\\q' || i || '.exe' AS "Image" FROM range(5) t(i)) TO '${parquet}' (FORMAT parquet)`);
    con.closeSync();
    instance.closeSync();
    const before = (await svc.siem.localStore.tenantStats('default')).events;
    const res = await detflow(svc, ['ingest', array, parquet, '--format', 'json']);
    expect(res.code).toBe(0);
    const report = JSON.parse(res.out);
    expect(report.files.map((f: { accepted: number }) => f.accepted)).toEqual([3, 5]);
    expect(report.files[1].logsources).toEqual([{ product: null, category: null, service: null, events: 5 }]);
    expect(report.files[1].warnings).toEqual([expect.objectContaining({ code: 'no_logsource', events: 5 })]);
    expect((await svc.siem.localStore.tenantStats('default')).events).toBe(before + 8);
  });

  it('prints the stored events by logsource over all batches, and warns of events without one', async () => {
    const file = path.join(dir, 'mixed.jsonl');
    fs.writeFileSync(file, [event(20), event(21), event(22)].map((e) => JSON.stringify(e)).join('\n'));
    const res = await detflow(svc, ['ingest', file, '--batch-lines', '2']);
    expect(res.code).toBe(0);
    expect(res.out).toContain(`${file}: 3 accepted, 0 rejected\n`);
    expect(res.out).toContain(`${file}: 3 stored with no logsource\n`);
    expect(res.out).toContain(
      `${file}: warning: 3 events were stored with no logsource (no product, category or service), so no rule with a logsource will ever match them. Name their logsource with --product and --category (or --service).\n`,
    );
    const named = await detflow(svc, ['ingest', file, '--product', 'Windows', '--category', 'process_creation', '--service', 'sysmon']);
    expect(named.out).toContain(`${file}: 3 stored with logsource product=windows category=process_creation service=sysmon\n`);
    expect(named.out).not.toContain('warning');
  });

  it('exits 2 for a file that is not there or a target that does not exist', async () => {
    expect((await detflow(svc, ['ingest', path.join(dir, 'missing.jsonl')])).code).toBe(2);
    const file = path.join(dir, 'one.jsonl');
    fs.writeFileSync(file, JSON.stringify(event(1)));
    const res = await detflow(svc, ['ingest', file, '--target', 'nowhere']);
    expect(res.code).toBe(2);
    expect(res.out).toMatch(/nowhere/);
  });
});
