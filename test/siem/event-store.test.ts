import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance, listValue } from '@duckdb/node-api';
import { DeploymentRegistry } from '../../siem/local/deployments';
import { IngestSourceError, LocalEventStore, MAX_REPORTED_LOGSOURCES } from '../../siem/local/event-store';
import type { IngestResult } from '../../siem/local/store-types';

/** The target (the service's target id) the tests' events are sent to and read from. */
const TARGET = 'target-a';

const DAY = 86_400_000;
const T0 = Date.UTC(2024, 0, 1);
const ALL_2024 = { from: new Date(T0), to: new Date(Date.UTC(2025, 0, 1)) };
const ps = `ends_with(lower("Image"), '\\powershell.exe')`;

let store: LocalEventStore;
let dir: string;

beforeEach(async () => {
  store = await LocalEventStore.open({ path: ':memory:' });
});
afterEach(async () => {
  await store.close();
});
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'detflow-siem-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const line = (o: Record<string, unknown>) => JSON.stringify(o);

describe('ingestion', () => {
  it('stores a good NDJSON batch with logsource, ids and cursors', async () => {
    const text = [
      line({ ts: '2024-01-01T10:00:00Z', id: 'e1', Image: 'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe', EventID: 1 }),
      line({ ts: '2024-01-01T11:00:00Z', id: 'e2', Image: 'C:\\Windows\\notepad.exe', EventID: 1 }),
    ].join('\n');
    const r = await store.ingest(
      'acme',
      TARGET,
      { kind: 'ndjson', input: text },
      { timestampField: 'ts', eventIdField: 'id', logsource: { product: 'Windows', category: 'process_creation' } },
    );
    expect(r).toMatchObject({ accepted: 2, rejected: 0, errors: [], firstSeq: 1, lastSeq: 2, cursor: 2 });
    const found = await store.search('acme', TARGET, ps, ALL_2024);
    expect(found.matched).toBe(1);
    expect(found.events[0]).toMatchObject({ eventId: 'e1', time: new Date('2024-01-01T10:00:00Z'), logsource: { product: 'windows', category: 'process_creation' } });
    expect(found.events[0]!.event.EventID).toBe(1);
  });

  it('rejects bad lines with their line numbers and stores every good line', async () => {
    const text = [
      line({ ts: '2024-01-01T00:00:01Z', n: 1 }), // 1
      '{"ts": "2024-01-01T00:00:02Z", "n": 2,}', // 2: trailing comma (DuckDB would accept it, JSON does not)
      '', // 3: blank lines are skipped but counted
      '[1, 2]', // 4
      line({ n: 5 }), // 5: no timestamp
      line({ ts: 'yesterday', n: 6 }), // 6
      line({ ts: '2024-02-30T00:00:00Z', n: 7 }), // 7: impossible date
      line({ ts: '2024-01-01T00:00:08Z', n: 8 }), // 8
    ].join('\r\n');
    const r = await store.ingest('acme', TARGET, { kind: 'ndjson', input: text }, { timestampField: 'ts' });
    expect(r.accepted).toBe(2);
    expect(r.rejected).toBe(5);
    expect(r.errors.map((e) => e.line)).toEqual([2, 4, 5, 6, 7]);
    expect(r.errors[0]!.error).toMatch(/^invalid JSON/);
    expect(r.errors[1]!.error).toBe('expected a JSON object, got array');
    expect(r.errors[2]!.error).toBe('timestamp field "ts" is missing');
    expect(r.errors[3]!.error).toMatch(/not an RFC 3339 time.*"yesterday"/);
    const stored = await store.search('acme', TARGET, 'true', ALL_2024);
    expect(stored.events.map((e) => e.event.n)).toEqual([1, 8]);
    expect(stored.events.map((e) => e.seq)).toEqual([1, 8]);
  });

  it('stores nothing and keeps the cursor when every line is bad', async () => {
    await store.ingest('acme', TARGET, { kind: 'ndjson', input: line({ ts: '2024-01-01T00:00:00Z' }) }, { timestampField: 'ts' });
    const r = await store.ingest('acme', TARGET, { kind: 'ndjson', input: 'nope\n{"x":1}' }, { timestampField: 'ts' });
    expect(r).toMatchObject({ accepted: 0, rejected: 2, firstSeq: null, lastSeq: null, cursor: 1 });
    expect(await store.latestCursor()).toBe(1);
    expect((await store.count('acme', TARGET, 'true', ALL_2024)).scanned).toBe(1);
  });

  it('writes nothing of a batch whose stream fails part-way', async () => {
    async function* failing(): AsyncGenerator<string> {
      yield line({ ts: '2024-01-01T00:00:00Z', n: 1 }) + '\n';
      yield line({ ts: '2024-01-01T00:00:01Z', n: 2 }) + '\n';
      throw new Error('connection reset');
    }
    const failed = store.ingest('acme', TARGET, { kind: 'ndjson', input: failing() }, { timestampField: 'ts' });
    await expect(failed).rejects.toThrow(IngestSourceError);
    await expect(failed).rejects.toThrow(/^cannot read NDJSON stream: connection reset$/);
    expect((await store.count('acme', TARGET, 'true', ALL_2024)).scanned).toBe(0);
    expect(await store.latestCursor()).toBe(0);
    // The store stays usable after the failure.
    const ok = await store.ingest('acme', TARGET, { kind: 'ndjson', input: line({ ts: '2024-01-01T00:00:00Z' }) }, { timestampField: 'ts' });
    expect(ok.accepted).toBe(1);
  });

  it('splits byte streams into lines across chunk boundaries, multi-byte characters included', async () => {
    const text = [line({ ts: '2024-01-01T00:00:00Z', User: 'Zoë Ä' }), line({ ts: '2024-01-01T00:00:01Z', User: '日本' })].join('\n');
    const bytes = Buffer.from(text, 'utf8');
    async function* chunks() {
      for (let i = 0; i < bytes.length; i += 3) yield new Uint8Array(bytes.subarray(i, i + 3));
    }
    const r = await store.ingest('acme', TARGET, { kind: 'ndjson', input: chunks() }, { timestampField: 'ts' });
    expect(r.accepted).toBe(2);
    const users = (await store.search('acme', TARGET, `"User" IN ('Zoë Ä', '日本')`, ALL_2024)).events.map((e) => e.event.User);
    expect(users).toEqual(['Zoë Ä', '日本']);
  });

  it('ingests JSON arrays, numbering elements from 1', async () => {
    const r = await store.ingest(
      'acme',
      TARGET,
      { kind: 'json-array', input: JSON.stringify([{ ts: '2024-01-01T00:00:00Z' }, 'x', { ts: 1704067200 }]) },
      { timestampField: 'ts' },
    );
    expect(r.accepted).toBe(2);
    expect(r.errors).toEqual([{ line: 2, error: 'expected a JSON object, got string' }]);
    const values = await store.ingest('acme', TARGET, { kind: 'json-array', input: [{ ts: 1704067200000 }] }, { timestampField: 'ts' });
    expect(values.accepted).toBe(1);
    await expect(store.ingest('acme', TARGET, { kind: 'json-array', input: '{"a":1}' }, { timestampField: 'ts' })).rejects.toThrow(IngestSourceError);
  });

  it('ingests a JSONL file', async () => {
    const path = join(dir, 'events.jsonl');
    writeFileSync(path, [line({ ts: '2024-01-01T00:00:00Z', Image: 'a' }), 'oops', line({ ts: '2024-01-02T00:00:00Z', Image: 'b' })].join('\n') + '\n');
    const r = await store.ingest('acme', TARGET, { kind: 'jsonl-file', path }, { timestampField: 'ts' });
    expect(r.accepted).toBe(2);
    expect(r.errors.map((e) => e.line)).toEqual([2]);
    await expect(store.ingest('acme', TARGET, { kind: 'jsonl-file', path: join(dir, 'missing.jsonl') }, { timestampField: 'ts' })).rejects.toThrow(/cannot read JSONL file/);
  });

  it('ingests a Parquet file written by DuckDB, reporting bad rows by row number', async () => {
    const path = join(dir, 'events.parquet');
    const inst = await DuckDBInstance.create(':memory:');
    const con = await inst.connect();
    await con.run(`COPY (
      SELECT * FROM (VALUES
        (TIMESTAMP '2024-03-01 10:00:00', 'C:\\x\\powershell.exe', 'windows'),
        (NULL, 'C:\\x\\cmd.exe', 'windows'),
        (TIMESTAMP '2024-03-02 10:00:00', 'C:\\x\\cmd.exe', 'Linux')
      ) AS t(UtcTime, Image, os)
    ) TO '${path}' (FORMAT parquet)`);
    con.closeSync();
    inst.closeSync();
    const r = await store.ingest('acme', TARGET, { kind: 'parquet-file', path }, { timestampField: 'UtcTime', logsource: { product: { field: 'os' } } });
    expect(r.accepted).toBe(2);
    expect(r.errors).toEqual([{ line: 2, error: 'timestamp field "UtcTime" is missing' }]);
    const found = await store.search('acme', TARGET, 'true', ALL_2024, { logsource: { product: 'linux' } });
    expect(found.events.map((e) => [e.time.toISOString(), e.event.Image])).toEqual([['2024-03-02T10:00:00.000Z', 'C:\\x\\cmd.exe']]);
    await expect(store.ingest('acme', TARGET, { kind: 'parquet-file', path: join(dir, 'missing.parquet') }, { timestampField: 'UtcTime' })).rejects.toThrow(IngestSourceError);
  });

  it('rejects what DuckDB reads but JSON does not (trailing commas, NaN, Infinity), and keeps such text inside strings', async () => {
    // DuckDB's own check accepts these, so the store must not rely on it alone.
    const lenient = [
      '{"ts": "2024-01-01T00:00:00Z", "a": 1 ,\t}',
      '{"ts": "2024-01-01T00:00:00Z", "a": [1, 2, ]}',
      '{"ts": "2024-01-01T00:00:00Z", "a": NaN}',
      '{"ts": "2024-01-01T00:00:00Z", "a":-Infinity}',
      '{"ts": "2024-01-01T00:00:00Z", "a": [inf]}',
    ];
    const duckdbAccepts = await store.read(
      async (con) => (await con.runAndReadAll(`SELECT bool_and(json_valid(x)) FROM unnest($1::VARCHAR[]) AS t(x)`, [listValue(lenient)])).getRows()[0]![0],
    );
    expect(duckdbAccepts).toBe(true);
    const lookalike = line({ ts: '2024-01-01T00:00:00Z', CommandLine: 'x, NaN ,} [-inf ,]' });
    const r = await store.ingest('acme', TARGET, { kind: 'ndjson', input: [...lenient, lookalike].join('\n') }, { timestampField: 'ts' });
    expect(r.errors.map((e) => e.line)).toEqual([1, 2, 3, 4, 5]);
    for (const e of r.errors) expect(e.error).toMatch(/^invalid JSON/);
    const stored = await store.search('acme', TARGET, 'true', ALL_2024);
    expect(stored.events.map((e) => [e.seq, e.event.CommandLine])).toEqual([[6, 'x, NaN ,} [-inf ,]']]);
  });

  it('rejects a strict JSON line DuckDB cannot read (an unpaired surrogate escape) instead of failing the batch', async () => {
    const unpaired = '{"ts": "2024-01-01T00:00:00Z", "User": "\\ud800"}';
    expect(() => JSON.parse(unpaired)).not.toThrow();
    const text = [line({ ts: '2024-01-01T00:00:00Z', n: 1 }), unpaired, line({ ts: '2024-01-01T00:00:02Z', n: 3 })].join('\n');
    const r = await store.ingest('acme', TARGET, { kind: 'ndjson', input: text }, { timestampField: 'ts' });
    expect(r).toMatchObject({ accepted: 2, rejected: 1 });
    expect(r.errors).toEqual([{ line: 2, error: 'the event contains an unpaired UTF-16 surrogate at /User, which alerts (kept in PostgreSQL) cannot store' }]);
  });

  it('lists the first errors by line number whichever check found them', async () => {
    const text = [
      line({ ts: '2024-01-01T00:00:00Z' }), // 1: stored
      line({ ts: 'later' }), // 2: timestamp, found last (at the insert)
      '{"ts": "2024-01-01T00:00:00Z", "x": "\\udc00"}', // 3: found by DuckDB's check
      'nope', // 4: found while reading
      'nope', // 5
    ].join('\n');
    const r = await store.ingest('acme', TARGET, { kind: 'ndjson', input: text }, { timestampField: 'ts', maxReportedErrors: 2 });
    expect(r).toMatchObject({ accepted: 1, rejected: 4, errorsTruncated: true });
    expect(r.errors.map((e) => e.line)).toEqual([2, 3]);
  });

  it('gives batches ingested concurrently disjoint cursor ranges in commit order, each seen once', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    async function* slow(): AsyncGenerator<string> {
      yield line({ ts: '2024-01-01T00:00:00Z', n: 'slow-1' }) + '\n';
      await held;
      yield line({ ts: '2024-01-01T00:00:01Z', n: 'slow-2' });
    }
    const first = store.ingest('acme', TARGET, { kind: 'ndjson', input: slow() }, { timestampField: 'ts' });
    // The second batch is read while the first is still arriving, and is written first.
    const second = await store.ingest(
      'acme',
      TARGET,
      { kind: 'ndjson', input: [line({ ts: '2024-01-01T00:00:02Z', n: 'fast-1' }), line({ ts: '2024-01-01T00:00:03Z', n: 'fast-2' })].join('\n') },
      { timestampField: 'ts' },
    );
    release();
    const later = await first;
    expect(second).toMatchObject({ firstSeq: 1, lastSeq: 2, cursor: 2 });
    expect(later).toMatchObject({ firstSeq: 3, lastSeq: 4, cursor: 4 });
    const seen = await store.since('acme', TARGET, 'true', 0);
    expect(seen.events.map((e) => [e.seq, e.event.n])).toEqual([
      [1, 'fast-1'],
      [2, 'fast-2'],
      [3, 'slow-1'],
      [4, 'slow-2'],
    ]);
  });

  it('caps the listed errors but counts them all', async () => {
    const text = Array.from({ length: 30 }, (_, i) => (i % 2 === 0 ? 'bad' : line({ t: 'bad' }))).join('\n');
    const r = await store.ingest('acme', TARGET, { kind: 'ndjson', input: text }, { timestampField: 't', maxReportedErrors: 5 });
    expect(r.rejected).toBe(30);
    expect(r.errors.map((e) => e.line)).toEqual([1, 2, 3, 4, 5]);
    expect(r.errorsTruncated).toBe(true);
  });
});

describe('group commit', () => {
  let grouped: LocalEventStore;
  beforeEach(async () => {
    // A long wait, so batches started together are always committed together here.
    grouped = await LocalEventStore.open({ path: ':memory:', groupCommitWaitMs: 30_000 });
  });
  afterEach(() => grouped.close());

  const batch = (tag: string, n: number, at = 0) => Array.from({ length: n }, (_, i) => line({ ts: new Date(T0 + (at + i) * 1000).toISOString(), tag, i })).join('\n');
  const transactions = async () => grouped.read(async (con) => Number((await con.runAndReadAll(`SELECT count(DISTINCT ingested_at) FROM ingest_batches`)).getRows()[0]![0]));

  it('commits batches ready together in one transaction, with disjoint cursor ranges each seen once', async () => {
    const tags = ['a', 'b', 'c'];
    const results = await Promise.all(
      tags.map((tag, k) => grouped.ingest(`tenant-${tag}`, TARGET, { kind: 'ndjson', input: batch(tag, 50 + k, k * 100) }, { timestampField: 'ts' })),
    );
    expect(await transactions()).toBe(1);
    const ranges = results.map((r) => [r.firstSeq!, r.lastSeq!] as const).sort((x, y) => x[0] - y[0]);
    for (let i = 1; i < ranges.length; i++) expect(ranges[i]![0]).toBe(ranges[i - 1]![1] + 1);
    expect(Math.max(...results.map((r) => r.cursor))).toBe(50 + 51 + 52);
    expect(await grouped.latestCursor()).toBe(153);
    tags.forEach((tag, k) => expect(results[k]!.accepted).toBe(50 + k));
    for (const [k, tag] of tags.entries()) {
      const seen = await grouped.since(`tenant-${tag}`, TARGET, 'true', 0, { limit: 1000 });
      expect(seen.events.map((e) => e.event.i)).toEqual(Array.from({ length: 50 + k }, (_, i) => i));
      expect(seen.events.every((e) => e.seq >= results[k]!.firstSeq! && e.seq <= results[k]!.lastSeq!)).toBe(true);
      expect((await grouped.since(`tenant-${tag}`, TARGET, 'true', seen.cursor)).events).toEqual([]);
    }
  });

  it('keeps line errors and seq gaps per batch inside a group', async () => {
    const withErrors = [line({ ts: '2024-01-01T00:00:00Z', n: 1 }), 'nope', line({ ts: 'later', n: 3 }), line({ ts: '2024-01-01T00:00:04Z', n: 4 })].join('\n');
    const [clean, dirty] = await Promise.all([
      grouped.ingest('acme', TARGET, { kind: 'ndjson', input: batch('clean', 3) }, { timestampField: 'ts' }),
      grouped.ingest('acme', TARGET, { kind: 'ndjson', input: withErrors }, { timestampField: 'ts' }),
    ]);
    expect(await transactions()).toBe(1);
    expect(clean).toMatchObject({ accepted: 3, rejected: 0, errors: [] });
    expect(dirty).toMatchObject({ accepted: 2, rejected: 2 });
    expect(dirty.errors.map((e) => e.line)).toEqual([2, 3]);
    expect(dirty.errors[1]!.error).toMatch(/not an RFC 3339 time/);
    expect(dirty.lastSeq! - dirty.firstSeq!).toBe(3); // seq = base + line, as for a batch alone
  });

  it('counts each batch of a group by its own logsources', async () => {
    const [win, none] = await Promise.all([
      grouped.ingest('acme', TARGET, { kind: 'ndjson', input: batch('w', 4) }, { timestampField: 'ts', logsource: { product: 'windows' } }),
      grouped.ingest('acme', TARGET, { kind: 'ndjson', input: batch('n', 6, 10) }, { timestampField: 'ts' }),
    ]);
    expect(await transactions()).toBe(1);
    expect(win.logsources).toEqual([{ product: 'windows', category: null, service: null, events: 4 }]);
    expect(win.withoutLogsource).toBe(0);
    expect(none.logsources).toEqual([{ product: null, category: null, service: null, events: 6 }]);
    expect(none.withoutLogsource).toBe(6);
  });

  it('rejects an epoch beyond the timestamp range as a bad line; the other batches of its group are committed', async () => {
    // Such an epoch once failed the insert and so the whole batch: now it is a line error like any other.
    const huge = [line({ ts: '2024-01-01T00:00:00Z', n: 1 }), '{"ts": 1e300, "n": 2}', '{"ts": -1e300, "n": 3}'].join('\n');
    const [a, bad, c] = await Promise.all([
      grouped.ingest('acme', TARGET, { kind: 'ndjson', input: batch('a', 5) }, { timestampField: 'ts' }),
      grouped.ingest('acme', TARGET, { kind: 'ndjson', input: huge }, { timestampField: 'ts' }),
      grouped.ingest('acme', TARGET, { kind: 'ndjson', input: batch('c', 7) }, { timestampField: 'ts' }),
    ]);
    expect(await transactions()).toBe(1);
    expect(a.accepted).toBe(5);
    expect(c.accepted).toBe(7);
    expect(bad).toMatchObject({ accepted: 1, rejected: 2 });
    expect(bad.errors.map((e) => e.line)).toEqual([2, 3]);
    expect(bad.errors[0]!.error).toMatch(/not an RFC 3339 time or a Unix epoch number/);
    const stored = await grouped.since('acme', TARGET, 'true', 0, { limit: 100 });
    expect(stored.events).toHaveLength(13);
    // The store goes on: the next batch continues the cursor.
    const next = await grouped.ingest('acme', TARGET, { kind: 'ndjson', input: batch('d', 1) }, { timestampField: 'ts' });
    expect(next.firstSeq).toBe(stored.cursor + 1);
  });

  it('leaves no stage table behind', async () => {
    await Promise.allSettled([
      grouped.ingest('acme', TARGET, { kind: 'ndjson', input: batch('a', 2) }, { timestampField: 'ts' }),
      grouped.ingest('acme', TARGET, { kind: 'json-array', input: '{"not": "an array"}' }, { timestampField: 'ts' }),
    ]);
    const left = await grouped.read(async (con) =>
      Number((await con.runAndReadAll(`SELECT count(*) FROM duckdb_databases() WHERE database_name LIKE 'stage_%'`)).getRows()[0]![0]),
    );
    expect(left).toBe(0);
  });

  it('writes batches that waited for the writer together, each with its own counts, errors, seq range and hourly counts', async () => {
    // The writer is held, so every batch below is staged and waiting when it is free again, and
    // the group takes them all at once: runs of one shape are written by one statement each.
    let release!: () => void;
    const held = grouped.write(() => new Promise<void>((resolve) => (release = resolve)));
    const trailingBad = [line({ ts: '2024-01-01T00:00:00Z', k: 't1' }), line({ ts: '2024-01-01T00:00:01Z', k: 't2' }), line({ ts: 'soon', k: 't3' })].join('\n');
    const allBad = [line({ ts: 'never', k: 'x1' }), line({ k: 'x2' })].join('\n');
    const badJsonLast = [line({ ts: '2024-01-01T02:00:00Z', k: 'j1' }), '{oops'].join('\n');
    const inputs: Array<[string, object]> = [
      [batch('a', 4), {}],
      [trailingBad, {}],
      [batch('b', 2, 7200), {}],
      [allBad, {}],
      [batch('w', 3, 3600), { logsource: { product: 'windows' } }],
      [badJsonLast, {}],
    ];
    // Started apart, so they are staged (and wait for the writer) in this order.
    const pending: Promise<IngestResult>[] = [];
    for (const [input, extra] of inputs) {
      pending.push(grouped.ingest('acme', TARGET, { kind: 'ndjson', input }, { timestampField: 'ts', ...extra }));
      await new Promise((r) => setTimeout(r, 150));
    }
    release();
    await held;
    const [a, trailing, b, none, win, json] = (await Promise.all(pending)) as [IngestResult, IngestResult, IngestResult, IngestResult, IngestResult, IngestResult];
    expect(await transactions()).toBe(1);
    expect([a, trailing, b, none, win, json].map((r) => [r.accepted, r.rejected])).toEqual([
      [4, 0],
      [2, 1],
      [2, 0],
      [0, 2],
      [3, 0],
      [1, 1],
    ]);
    expect(trailing.errors.map((e) => e.line)).toEqual([3]);
    expect(none.errors.map((e) => [e.line, e.error.includes('missing')])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(json.errors.map((e) => e.line)).toEqual([2]);
    expect(win.logsources).toEqual([{ product: 'windows', category: null, service: null, events: 3 }]);
    expect(b.withoutLogsource).toBe(2);
    expect([none.firstSeq, none.lastSeq]).toEqual([null, null]);
    // Every stored event once, inside its own batch's range, ranges disjoint.
    const stored = await grouped.since('acme', TARGET, 'true', 0, { limit: 100 });
    expect(stored.events).toHaveLength(12);
    const withEvents = [a, trailing, win, json, b];
    for (const r of withEvents) {
      const mine = stored.events.filter((e) => e.seq >= r.firstSeq! && e.seq <= r.lastSeq!);
      expect(mine).toHaveLength(r.accepted);
    }
    const ranges = withEvents.map((r) => [r.firstSeq!, r.lastSeq!]).sort((x, y) => x[0]! - y[0]!);
    for (let i = 1; i < ranges.length; i++) expect(ranges[i]![0]).toBeGreaterThan(ranges[i - 1]![1]!);
    // Written together, the rejected last line keeps its seq: the next batch starts after it
    // (written one by one, it started right after the last stored event).
    expect(b.firstSeq).toBe(trailing.lastSeq! + 2);
    expect(a.lastSeq! + 1).toBe(trailing.firstSeq);
    const hours = await grouped.read(async (con) => Number((await con.runAndReadAll(`SELECT sum(events) FROM event_hours`)).getRows()[0]![0]));
    expect(hours).toBe(12);
    const next = await grouped.ingest('acme', TARGET, { kind: 'ndjson', input: batch('c', 1) }, { timestampField: 'ts' });
    expect(next.firstSeq).toBeGreaterThan(Math.max(...withEvents.map((r) => r.lastSeq!)));
    expect((await grouped.since('acme', TARGET, 'true', stored.cursor)).events.map((e) => e.event.tag)).toEqual(['c']);
  });

  it('sees every line of a batch that joins a group after its transaction began', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    async function* late(): AsyncGenerator<string> {
      yield line({ ts: '2024-01-01T00:00:00Z', n: 'late-1' }) + '\n';
      await held;
      yield line({ ts: '2024-01-01T00:00:01Z', n: 'late-2' });
    }
    const lateBatch = grouped.ingest('acme', TARGET, { kind: 'ndjson', input: late() }, { timestampField: 'ts' });
    const early = grouped.ingest('acme', TARGET, { kind: 'ndjson', input: batch('early', 3) }, { timestampField: 'ts' });
    // The early batch is written into the open group transaction, which then waits for the late one.
    await new Promise((r) => setTimeout(r, 300));
    release();
    const [e, l] = await Promise.all([early, lateBatch]);
    expect(e.accepted).toBe(3);
    expect(l).toMatchObject({ accepted: 2, rejected: 0 });
    expect(await transactions()).toBe(1);
    expect((await grouped.since('acme', TARGET, 'true', 0)).events.map((x) => x.event.n ?? x.event.tag)).toEqual(['early', 'early', 'early', 'late-1', 'late-2']);
  });
});

describe('stored logsources', () => {
  const at = (i: number) => new Date(T0 + i * 1000).toISOString();

  it('counts the stored events of the batch by logsource, as stored (lower-cased), bad lines left out', async () => {
    const text = [
      line({ ts: at(1), vendor: 'Windows', kind: 'process_creation' }),
      line({ ts: at(2), vendor: 'windows', kind: 'Process_Creation' }),
      line({ ts: at(3), vendor: 'windows', kind: 'process_creation', svc: 'sysmon' }),
      line({ ts: at(4), vendor: 'linux' }),
      line({ ts: at(5) }),
      line({ ts: at(6), other: 'x' }),
      line({ vendor: 'windows', kind: 'process_creation' }), // no timestamp: rejected, not counted
      'not json',
      line({ ts: at(9) }),
    ].join('\n');
    const r = await store.ingest(
      'acme',
      TARGET,
      { kind: 'ndjson', input: text },
      { timestampField: 'ts', logsource: { product: { field: 'vendor' }, category: { field: 'kind' }, service: { field: 'svc' } } },
    );
    expect(r).toMatchObject({ accepted: 7, rejected: 2, withoutLogsource: 3, logsourcesTruncated: false });
    expect(r.logsources).toEqual([
      { product: null, category: null, service: null, events: 3 },
      { product: 'windows', category: 'process_creation', service: null, events: 2 },
      { product: 'linux', category: null, service: null, events: 1 },
      { product: 'windows', category: 'process_creation', service: 'sysmon', events: 1 },
    ]);
  });

  it('counts only this batch, and nothing without a logsource when the batch names one', async () => {
    await store.ingest('acme', TARGET, { kind: 'ndjson', input: [line({ ts: at(1) }), line({ ts: at(2) })].join('\n') }, { timestampField: 'ts' });
    const r = await store.ingest(
      'acme',
      TARGET,
      { kind: 'ndjson', input: [line({ ts: at(3) }), line({ ts: at(4) }), line({ ts: at(5) })].join('\n') },
      { timestampField: 'ts', logsource: { product: 'Windows', category: 'process_creation' } },
    );
    expect(r.logsources).toEqual([{ product: 'windows', category: 'process_creation', service: null, events: 3 }]);
    expect(r.withoutLogsource).toBe(0);
    const none = await store.ingest('acme', TARGET, { kind: 'ndjson', input: 'nope' }, { timestampField: 'ts' });
    expect(none).toMatchObject({ accepted: 0, logsources: [], logsourcesTruncated: false, withoutLogsource: 0 });
  });

  it('lists the largest logsources up to the cap, and always the events without one', async () => {
    const n = MAX_REPORTED_LOGSOURCES + 5;
    const lines = Array.from({ length: n }, (_, i) => line({ ts: at(i), vendor: `p${String(i).padStart(3, '0')}` }));
    // p000 has the most events, then the events without a logsource would come last by count.
    lines.push(line({ ts: at(n), vendor: 'p000' }), line({ ts: at(n + 1) }));
    const r = await store.ingest('acme', TARGET, { kind: 'ndjson', input: lines.join('\n') }, { timestampField: 'ts', logsource: { product: { field: 'vendor' } } });
    expect(r.accepted).toBe(n + 2);
    expect(r.logsourcesTruncated).toBe(true);
    expect(r.withoutLogsource).toBe(1);
    expect(r.logsources).toHaveLength(MAX_REPORTED_LOGSOURCES + 1);
    expect(r.logsources[0]).toEqual({ product: 'p000', category: null, service: null, events: 2 });
    expect(r.logsources.filter((l) => l.product === null)).toEqual([{ product: null, category: null, service: null, events: 1 }]);
    expect(r.logsources.some((l) => l.product === `p${String(n - 1).padStart(3, '0')}`)).toBe(false);
  });
});

describe('timestamps', () => {
  const accepted: Array<[unknown, string]> = [
    ['2024-05-06T07:08:09Z', '2024-05-06T07:08:09.000Z'],
    ['2024-05-06T07:08:09.123456Z', '2024-05-06T07:08:09.123Z'],
    ['2024-05-06 07:08:09.5', '2024-05-06T07:08:09.500Z'], // no offset: UTC
    ['2024-05-06T09:08:09+02:00', '2024-05-06T07:08:09.000Z'],
    ['2024-05-06T02:08:09-0500', '2024-05-06T07:08:09.000Z'],
    ['2024-05-06', '2024-05-06T00:00:00.000Z'],
    ['2024-05-06t07:08:09z', '2024-05-06T07:08:09.000Z'], // lower-case letters: not the common form, same rule
    ['2024-05-06T07:08:09.123456789Z', '2024-05-06T07:08:09.123Z'], // nanoseconds
    [1714979289, '2024-05-06T07:08:09.000Z'], // seconds
    [1714979289.25, '2024-05-06T07:08:09.250Z'],
    [1714979289123, '2024-05-06T07:08:09.123Z'], // milliseconds
    [1714979289123456, '2024-05-06T07:08:09.123Z'], // microseconds
  ];
  const rejected: unknown[] = ['06/05/2024', '1714979289', 'Mon, 06 May 2024 07:08:09 GMT', true, null, { s: 1 }, '2024-13-01T00:00:00Z', 1e300, -1e300, 1e25];

  it('accepts RFC 3339 strings and epoch numbers of every unit, as UTC', async () => {
    const r = await store.ingest('t', TARGET, { kind: 'json-array', input: accepted.map(([ts], i) => ({ ts, i })) }, { timestampField: 'ts' });
    expect(r.errors).toEqual([]);
    const events = (await store.search('t', TARGET, 'true', { from: new Date(0), to: new Date(Date.UTC(2100, 0)) }, { limit: 100 })).events;
    const byIndex = new Map(events.map((e) => [e.event.i as number, e.time.toISOString()]));
    expect(accepted.map((_, i) => byIndex.get(i))).toEqual(accepted.map(([, iso]) => iso));
  });

  it('rejects every other form', async () => {
    const r = await store.ingest('t', TARGET, { kind: 'json-array', input: rejected.map((ts) => ({ ts })) }, { timestampField: 'ts' });
    expect(r.accepted).toBe(0);
    expect(r.errors.map((e) => e.line)).toEqual(rejected.map((_, i) => i + 1));
  });
});

describe('cursor', () => {
  it('hands out new events exactly once, per tenant, in commit order', async () => {
    const ev = (tenantless: number) => line({ ts: new Date(T0 + tenantless * 1000).toISOString(), n: tenantless });
    await store.ingest('a', TARGET, { kind: 'ndjson', input: [ev(1), ev(2)].join('\n') }, { timestampField: 'ts' });
    await store.ingest('b', TARGET, { kind: 'ndjson', input: ev(3) }, { timestampField: 'ts' });
    const first = await store.since('a', TARGET, 'true', 0);
    expect(first.events.map((e) => e.event.n)).toEqual([1, 2]);
    expect(first.cursor).toBe(3); // store-wide: covers tenant b's batch too
    expect((await store.since('a', TARGET, 'true', first.cursor)).events).toEqual([]);

    await store.ingest('a', TARGET, { kind: 'ndjson', input: [ev(4), 'bad', ev(5)].join('\n') }, { timestampField: 'ts' });
    const second = await store.since('a', TARGET, 'true', first.cursor);
    expect(second.events.map((e) => e.event.n)).toEqual([4, 5]);
    expect(second.scanned).toBe(2);
    expect(second.cursor).toBeGreaterThan(first.cursor);
    // An old event arriving late is still "new" for the cursor, whatever its event time.
    await store.ingest('a', TARGET, { kind: 'ndjson', input: line({ ts: '2020-01-01T00:00:00Z', n: 0 }) }, { timestampField: 'ts' });
    expect((await store.since('a', TARGET, 'true', second.cursor)).events.map((e) => e.event.n)).toEqual([0]);
  });

  it('counts matches beyond the limit without returning them', async () => {
    await store.ingest('a', TARGET, { kind: 'json-array', input: Array.from({ length: 10 }, (_, i) => ({ ts: T0 + i, i })) }, { timestampField: 'ts' });
    const r = await store.since('a', TARGET, `CAST("ProcessId" AS INTEGER) IS NULL`, 0, { limit: 3 });
    expect(r).toMatchObject({ matched: 10, truncated: true });
    expect(r.events).toHaveLength(3);
  });
});

describe('retention', () => {
  it("deletes only the tenant's events older than the retention period", async () => {
    const now = new Date(T0 + 100 * DAY);
    const days = [1, 29, 31, 90];
    for (const tenant of ['a', 'b']) {
      await store.ingest(
        tenant,
        TARGET,
        { kind: 'json-array', input: days.map((d) => ({ ts: new Date(now.getTime() - d * DAY).toISOString(), d })) },
        { timestampField: 'ts' },
      );
    }
    const r = await store.applyRetention('a', 30, now);
    expect(r.deleted).toBe(2);
    const window = { from: new Date(0), to: now };
    expect((await store.search('a', TARGET, 'true', window)).events.map((e) => e.event.d)).toEqual([29, 1]);
    expect((await store.count('b', TARGET, 'true', window)).scanned).toBe(4);
    await expect(store.applyRetention('a', 0, now)).rejects.toThrow(RangeError);
  });
});

describe('windows', () => {
  /** Deterministic generator (mulberry32), so failures reproduce. */
  function rng(seed: number) {
    return () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = seed;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  const images = ['C:\\Windows\\System32\\cmd.exe', 'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe', 'C:\\Windows\\explorer.exe'];

  it('counts per window and per day equal to counts computed by hand', async () => {
    const rand = rng(42);
    const events = Array.from({ length: 5000 }, () => ({
      ts: new Date(T0 + Math.floor(rand() * 10 * DAY)).toISOString(),
      Image: images[Math.floor(rand() * images.length)]!,
      CommandLine: rand() < 0.3 ? 'powershell -enc AAAA' : 'whoami',
    }));
    const r = await store.ingest('acme', TARGET, { kind: 'json-array', input: events }, { timestampField: 'ts' });
    expect(r.accepted).toBe(5000);
    await store.ingest('other', TARGET, { kind: 'json-array', input: events.slice(0, 100) }, { timestampField: 'ts' });

    const window = { from: new Date(T0 + 2.5 * DAY), to: new Date(T0 + 7 * DAY) };
    const where = `${ps} AND contains("CommandLine", '-enc')`;
    const inWindow = events.filter((e) => Date.parse(e.ts) >= window.from.getTime() && Date.parse(e.ts) < window.to.getTime());
    const matches = inWindow.filter((e) => e.Image.toLowerCase().endsWith('\\powershell.exe') && e.CommandLine.includes('-enc'));
    const byDay = new Map<string, { scanned: number; matched: number }>();
    for (const e of inWindow) {
      const d = e.ts.slice(0, 10);
      const c = byDay.get(d) ?? { scanned: 0, matched: 0 };
      c.scanned++;
      if (matches.includes(e)) c.matched++;
      byDay.set(d, c);
    }
    const counted = await store.count('acme', TARGET, where, window);
    expect(counted.matched).toBe(matches.length);
    expect(counted.scanned).toBe(inWindow.length);
    expect(counted.bytesScanned).toBe(inWindow.reduce((s, e) => s + Buffer.byteLength(JSON.stringify(e)), 0));
    expect(counted.perDay).toEqual([...byDay.entries()].sort().map(([day, c]) => ({ day, ...c })));
    expect(counted.matched).toBeGreaterThan(0);

    const found = await store.search('acme', TARGET, where, window, { limit: 7 });
    expect(found.events).toHaveLength(7);
    expect(found.truncated).toBe(true);
    const times = found.events.map((e) => e.time.getTime());
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it('plans contiguous chunks that cover the window and add up to its events', async () => {
    const events = Array.from({ length: 240 }, (_, i) => ({ ts: T0 + i * 15 * 60_000 })); // every 15 min for 60 h
    await store.ingest('acme', TARGET, { kind: 'json-array', input: events }, { timestampField: 'ts' });
    const window = { from: new Date(T0 - DAY), to: new Date(T0 + 4 * DAY) };
    const chunks = await store.planChunks('acme', TARGET, window, 50);
    expect(chunks[0]!.from).toEqual(window.from);
    expect(chunks[chunks.length - 1]!.to).toEqual(window.to);
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.from).toEqual(chunks[i - 1]!.to);
    expect(chunks.reduce((s, c) => s + c.events, 0)).toBe(240);
    for (const c of chunks) expect((await store.count('acme', TARGET, 'true', c)).scanned).toBe(c.events);
    expect(chunks.length).toBe(5); // 4 events/hour → 13 hours (52 events) per chunk, 240 events
  });

  it('rejects empty or inverted windows', async () => {
    await expect(store.count('acme', TARGET, 'true', { from: new Date(T0), to: new Date(T0) })).rejects.toThrow(RangeError);
    await expect(store.count('acme', TARGET, 'true', { from: new Date(NaN), to: new Date(T0) })).rejects.toThrow(RangeError);
  });
});

describe('fixture tables', () => {
  it('evaluates fixtures apart from real data and drops the table afterwards', async () => {
    await store.ingest('acme', TARGET, { kind: 'json-array', input: [{ ts: T0, Image: 'C:\\a\\powershell.exe' }] }, { timestampField: 'ts' });
    let tableName = '';
    const matched = await store.withFixtureTable([{ Image: 'x\\POWERSHELL.EXE' }, { Image: 'x\\cmd.exe' }, { CommandLine: 'powershell' }], async (t) => {
      tableName = t.name;
      // Real events are not in the fixture table, fixture events are not in the store.
      expect((await store.count('acme', TARGET, ps, ALL_2024)).matched).toBe(1);
      return t.matching(ps);
    });
    expect(matched).toEqual([1]);
    expect((await store.count('acme', TARGET, 'true', ALL_2024)).scanned).toBe(1);
    const leftovers = await store.read(async (con) => (await con.runAndReadAll(`SELECT table_name FROM duckdb_tables() WHERE schema_name = 'fixtures'`)).getRows());
    expect(tableName).toMatch(/^"fixtures"\.fixture_/);
    expect(leftovers).toEqual([]);
  });

  it('drops the table when the callback throws', async () => {
    await expect(store.withFixtureTable([{ a: 1 }], async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    const leftovers = await store.read(async (con) => (await con.runAndReadAll(`SELECT count(*) FROM duckdb_tables() WHERE schema_name = 'fixtures'`)).getRows());
    expect(Number(leftovers[0]![0])).toBe(0);
  });
});

describe('file-backed store', () => {
  it('lets a batch still arriving when close() is called finish and stores it', async () => {
    const path = join(dir, 'closing.duckdb');
    const a = await LocalEventStore.open({ path });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    async function* arriving(): AsyncGenerator<string> {
      yield line({ ts: '2024-01-01T00:00:00Z' }) + '\n';
      await held;
      yield line({ ts: '2024-01-01T00:00:01Z' });
    }
    const ingested = a.ingest('acme', TARGET, { kind: 'ndjson', input: arriving() }, { timestampField: 'ts' });
    const closed = a.close();
    release();
    expect((await ingested).accepted).toBe(2);
    await closed;
    await expect(a.ingest('acme', TARGET, { kind: 'ndjson', input: line({ ts: '2024-01-01T00:00:00Z' }) }, { timestampField: 'ts' })).rejects.toThrow(/closed/);
    const b = await LocalEventStore.open({ path });
    try {
      expect(await b.latestCursor()).toBe(2);
    } finally {
      await b.close();
    }
  });

  it('keeps events, cursor and stats across reopening', async () => {
    const path = join(dir, 'store.duckdb');
    const a = await LocalEventStore.open({ path });
    await a.ingest('acme', TARGET, { kind: 'json-array', input: [{ ts: T0 }, { ts: T0 + DAY }] }, { timestampField: 'ts' });
    await a.close();
    const b = await LocalEventStore.open({ path });
    try {
      expect(await b.latestCursor()).toBe(2);
      const stats = await b.tenantStats('acme');
      expect(stats).toMatchObject({ events: 2, firstEventTime: new Date(T0), lastEventTime: new Date(T0 + DAY) });
      const more = await b.ingest('acme', TARGET, { kind: 'json-array', input: [{ ts: T0 }] }, { timestampField: 'ts' });
      expect(more.firstSeq).toBe(3);
    } finally {
      await b.close();
    }
  });
});

describe('targets', () => {
  const OTHER = 'target-b';
  const batch = (tag: string, times: number[]) => ({
    kind: 'json-array' as const,
    input: times.map((ts, i) => ({ ts, tag, Image: i % 2 ? 'x\\cmd.exe' : 'x\\powershell.exe' })),
  });

  it("reads only the target's own events: counts, searches, replay plans, live evaluation and stats", async () => {
    await store.ingest('acme', TARGET, batch('a', [T0, T0 + 1000, T0 + 2000]), { timestampField: 'ts' });
    await store.ingest('acme', OTHER, batch('b', [T0 + 500, T0 + DAY, T0 + DAY + 1, T0 + DAY + 2, T0 + DAY + 3]), { timestampField: 'ts' });
    await store.ingest('other-tenant', TARGET, batch('c', [T0]), { timestampField: 'ts' });
    const tags = (events: ReadonlyArray<{ event: Record<string, unknown> }>) => [...new Set(events.map((e) => e.event.tag))];

    expect(await store.count('acme', TARGET, ps, ALL_2024)).toMatchObject({ scanned: 3, matched: 2 });
    expect(await store.count('acme', OTHER, ps, ALL_2024)).toMatchObject({ scanned: 5, matched: 3 });
    expect(tags((await store.search('acme', TARGET, 'true', ALL_2024)).events)).toEqual(['a']);
    expect(tags((await store.search('acme', OTHER, 'true', ALL_2024)).events)).toEqual(['b']);
    expect((await store.planChunks('acme', TARGET, ALL_2024, 1000)).map((c) => c.events)).toEqual([3]);
    expect((await store.planChunks('acme', OTHER, ALL_2024, 1000)).map((c) => c.events)).toEqual([5]);
    // A window cutting an hour counts that hour on the events table: the target's own too.
    const cut = { from: new Date(T0 + 1), to: new Date(T0 + DAY + 2) };
    expect((await store.planChunks('acme', OTHER, cut, 1000)).map((c) => c.events)).toEqual([3]);

    const a = await store.since('acme', TARGET, 'true', 0);
    expect(a).toMatchObject({ scanned: 3, cursor: 9 });
    expect(tags(a.events)).toEqual(['a']);
    expect(tags((await store.since('acme', OTHER, 'true', 0)).events)).toEqual(['b']);
    expect((await store.since('other-tenant', OTHER, 'true', 0)).scanned).toBe(0);

    expect((await store.tenantStats('acme', TARGET)).events).toBe(3);
    expect((await store.tenantStats('acme', OTHER)).events).toBe(5);
    expect((await store.tenantStats('acme')).events).toBe(8);
    await expect(store.count('acme', '', 'true', ALL_2024)).rejects.toThrow(/targetId/);
    await expect(store.ingest('acme', ' ', batch('x', [T0]), { timestampField: 'ts' })).rejects.toThrow(/targetId/);
  });

  it("applies the tenant's retention on every one of its targets and keeps each target's hourly counts right", async () => {
    const now = new Date(T0 + 100 * DAY);
    const ago = (d: number) => now.getTime() - d * DAY;
    await store.ingest('acme', TARGET, batch('a', [ago(40), ago(10)]), { timestampField: 'ts' });
    await store.ingest('acme', OTHER, batch('b', [ago(40), ago(35), ago(5)]), { timestampField: 'ts' });
    expect((await store.applyRetention('acme', 30, now)).deleted).toBe(3);
    const window = { from: new Date(0), to: now };
    expect((await store.planChunks('acme', TARGET, window, 1000)).map((c) => c.events)).toEqual([1]);
    expect((await store.planChunks('acme', OTHER, window, 1000)).map((c) => c.events)).toEqual([1]);
  });

  it('gives events written before targets to the owner the service names, once, and reads them only then', async () => {
    const path = join(dir, 'before-targets.duckdb');
    const old = await LocalEventStore.open({ path });
    await old.ingest('acme', TARGET, batch('old', [T0, T0 + 1000]), { timestampField: 'ts' });
    await old.ingest('globex', TARGET, batch('old', [T0]), { timestampField: 'ts' });
    await old.ingest('initech', TARGET, batch('old', [T0]), { timestampField: 'ts' });
    await new DeploymentRegistry(old).deploy({ deploymentId: 'd-old', tenantId: 'acme', targetId: TARGET, rule: { ruleId: 'r', version: 1, query: 'true' } }, new Date(T0));
    await old.close();
    // The file as a version before targets wrote it: no target_id column, no store_meta table.
    const inst = await DuckDBInstance.create(path);
    const con = await inst.connect();
    await con.run(`ALTER TABLE events DROP COLUMN target_id`);
    await con.run(`ALTER TABLE event_hours DROP COLUMN target_id`);
    await con.run(`DROP TABLE store_meta`);
    await con.run(`ALTER TABLE deployed_rules DROP COLUMN target_id`);
    con.closeSync();
    inst.closeSync();

    const b = await LocalEventStore.open({ path });
    try {
      expect(await b.hasUntargetedEvents()).toBe(true);
      expect((await b.count('acme', TARGET, 'true', ALL_2024)).scanned).toBe(0); // nobody's until adopted
      // A batch sent meanwhile keeps its own target.
      await b.ingest('acme', OTHER, batch('new', [T0]), { timestampField: 'ts' });
      expect(
        await b.adoptUntargetedEvents([
          { tenantId: 'acme', targetId: 'acme-local' },
          { tenantId: 'globex', targetId: 'globex-local' },
        ]),
      ).toBe(3);
      expect(await b.hasUntargetedEvents()).toBe(false);
      expect((await new DeploymentRegistry(b).listActive('acme', 'acme-local')).map((d) => d.deploymentId)).toEqual(['d-old']);
      expect(await b.count('acme', 'acme-local', 'true', ALL_2024)).toMatchObject({ scanned: 2 });
      expect((await b.planChunks('acme', 'acme-local', ALL_2024, 1000)).map((c) => c.events)).toEqual([2]);
      expect((await b.since('globex', 'globex-local', 'true', 0)).scanned).toBe(1);
      expect((await b.count('acme', OTHER, 'true', ALL_2024)).scanned).toBe(1);
      // A tenant the service did not name keeps no target: read by nothing, still the tenant's for retention.
      expect((await b.tenantStats('initech')).events).toBe(1);
      // Once only: a later call changes nothing.
      expect(await b.adoptUntargetedEvents([{ tenantId: 'initech', targetId: 'initech-local' }])).toBe(0);
      expect((await b.count('initech', 'initech-local', 'true', ALL_2024)).scanned).toBe(0);
      const more = await b.ingest('acme', 'acme-local', batch('more', [T0]), { timestampField: 'ts' });
      expect(more.firstSeq).toBe(6);
      expect((await b.search('acme', 'acme-local', 'true', ALL_2024)).events.map((e) => e.event.tag)).toEqual(['old', 'more', 'old']);
    } finally {
      await b.close();
    }
    const c = await LocalEventStore.open({ path });
    try {
      expect(await c.hasUntargetedEvents()).toBe(false);
      expect((await c.count('acme', 'acme-local', 'true', ALL_2024)).scanned).toBe(3);
    } finally {
      await c.close();
    }
  });
});
