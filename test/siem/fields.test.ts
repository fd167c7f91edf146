import { defaultFieldExpression } from '../../sigma/backends/sql';
import { compileRule } from '../../sigma/evaluate';
import { parseRule } from '../../sigma/parse';
import { BASE_COLUMNS, fieldExpression, PROMOTED_FIELDS } from '../../siem/local/fields';
import { LocalEventStore } from '../../siem/local/event-store';
import { compileSigmaForLocal } from '../../siem/local/sigma-compiler';

/** The target (the service's target id) the tests' events are sent to and read from. */
const TARGET = 'target-a';

let store: LocalEventStore;
beforeEach(async () => {
  store = await LocalEventStore.open({ path: ':memory:' });
});
afterEach(() => store.close());

describe('field mapping', () => {
  it('keeps base column names apart from promoted fields, case-insensitively', () => {
    const base = new Set(BASE_COLUMNS.map((c) => c.toLowerCase()));
    expect(PROMOTED_FIELDS.filter((f) => base.has(f.toLowerCase()))).toEqual([]);
    expect(new Set(PROMOTED_FIELDS.map((f) => f.toLowerCase())).size).toBe(PROMOTED_FIELDS.length);
  });

  it('maps promoted fields to columns and every other field like the Sigma SQL backend does', () => {
    expect(fieldExpression('Image')).toBe('"Image"');
    for (const f of ['NotPromoted', 'a.b', `we"ird'name`, 'image']) expect(fieldExpression(f)).toBe(defaultFieldExpression(f));
  });

  it('gives a promoted column exactly the text the raw JSON fallback gives', async () => {
    const values: unknown[] = ['text', 'Zoë "quoted" \\ back', 1, -2.5, 1e21, 12345678901234567890, true, false, null, { a: [1, 'x'] }, [1, 2], ''];
    const events = values.map((v) => ({ Image: v, EventID: v, CommandLine: v }));
    const mismatches = await store.withFixtureTable(events, async (t) => {
      const differ = PROMOTED_FIELDS.slice(0, 3)
        .map((f) => `(${fieldExpression(f)} IS DISTINCT FROM json_extract_string(raw, '$."${f}"'))`)
        .join(' OR ');
      return t.matching(differ);
    });
    expect(mismatches).toEqual([]);
    // And the columns are filled (the comparison above is not NULL-vs-NULL everywhere).
    expect(await store.withFixtureTable(events, (t) => t.matching(`"Image" = 'text'`))).toEqual([1]);
  });

  it('gives every promoted column of ingested events exactly the text the raw JSON fallback gives', async () => {
    const values: unknown[] = ['text', 'Zoë "quoted" \\ back', 1, -2.5, 1e21, 12345678901234567890, true, false, null, { a: [1, 'x'] }, [1, 2], ''];
    // Every promoted field in every event, with a value rotated per field, plus the batch's own keys.
    const events = values.map((_, i) => ({
      ts: '2024-01-01T00:00:00Z',
      id: `e${i}`,
      ...Object.fromEntries(PROMOTED_FIELDS.map((f, j) => [f, values[(i + j) % values.length]])),
    }));
    const text = events.map((e) => JSON.stringify(e)).join('\n');
    const r = await store.ingest('t', TARGET, { kind: 'ndjson', input: text }, { timestampField: 'ts', eventIdField: 'id', logsource: { product: { field: 'Image' } } });
    expect(r.accepted).toBe(values.length);
    const differ = PROMOTED_FIELDS.map((f) => `(${fieldExpression(f)} IS DISTINCT FROM json_extract_string(raw, '$."${f}"'))`).join(' OR ');
    const window = { from: new Date(Date.UTC(2024, 0, 1)), to: new Date(Date.UTC(2024, 0, 2)) };
    expect((await store.count('t', TARGET, differ, window)).matched).toBe(0);
    // The comparison above is not NULL-vs-NULL everywhere: each column holds its values.
    for (const f of PROMOTED_FIELDS) expect((await store.count('t', TARGET, `${fieldExpression(f)} = 'text'`, window)).matched).toBe(1);
    const stored = await store.search('t', TARGET, `"Image" = 'text'`, window);
    expect(stored.events.map((e) => [e.eventId, e.logsource.product])).toEqual([['e0', 'text']]);
  });
});

describe('Sigma rules over the store', () => {
  const rule = parseRule(`title: Encoded PowerShell from an unusual parent
id: 7a1e0c4e-0000-4000-8000-000000000001
logsource: {category: process_creation, product: windows}
detection:
    selection_img:
        - Image|endswith: ['\\powershell.exe', '\\pwsh.exe']
        - OriginalFileName: ['PowerShell.EXE', 'pwsh.dll']
    selection_cli:
        CommandLine|contains: [' -enc ', 'FromBase64String']
    filter_parent:
        ParentImage|endswith: '\\explorer.exe'
    filter_custom:
        NotPromotedField: 'skip me'
    condition: all of selection_* and not 1 of filter_*
`);
  const events = [
    { Image: 'C:\\x\\PowerShell.exe', CommandLine: 'powershell -enc AAA ', ParentImage: 'C:\\x\\cmd.exe' }, // match
    { Image: 'C:\\x\\powershell.exe', CommandLine: 'powershell -enc AAA ', ParentImage: 'C:\\Windows\\explorer.exe' }, // filtered
    { Image: 'C:\\x\\renamed.exe', OriginalFileName: 'pwsh.dll', CommandLine: '[Convert]::FromBase64String(x)' }, // match, no parent
    { Image: 'C:\\x\\powershell.exe', CommandLine: 'powershell -enc AAA ', NotPromotedField: 'skip me' }, // filtered via raw
    { Image: 'C:\\x\\cmd.exe', CommandLine: 'cmd /c -enc ' }, // no image match
  ];

  it('matches the same events as the in-process evaluator, with and without promoted columns', async () => {
    const compiled = compileSigmaForLocal(rule, store);
    if (!compiled.ok) throw new Error(JSON.stringify(compiled.issues));
    expect(compiled.query).toContain('"Image"');
    expect(compiled.query).toContain(`json_extract_string(raw, '$."NotPromotedField"')`);
    expect(compiled.logsource).toEqual({ category: 'process_creation', product: 'windows' });
    const viaColumns = await store.withFixtureTable(events, (t) => t.matching(compiled.query));
    const viaRaw = compileSigmaForLocal(rule, { fieldExpression: defaultFieldExpression, existsExpression: (f) => store.existsExpression(f) });
    if (!viaRaw.ok) throw new Error('raw compilation failed');
    expect(await store.withFixtureTable(events, (t) => t.matching(viaRaw.query))).toEqual(viaColumns);
    const matcher = compileRule(rule).match;
    expect(viaColumns).toEqual(events.flatMap((e, i) => (matcher(e) ? [i + 1] : [])));
    expect(viaColumns).toEqual([1, 3]);
  });

  it('reports what the backend cannot express as a compile issue with its position', () => {
    const lookahead = parseRule(`title: t
logsource: {product: windows}
detection:
    sel:
        CommandLine|re: 'foo(?=bar)'
    condition: sel
`);
    const r = compileSigmaForLocal(lookahead, store);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.issues[0]).toMatchObject({ code: 'backend-unsupported', line: 5 });
  });
  it('reports regexes DuckDB’s RE2 refuses as compile issues, before any query runs', () => {
    for (const pattern of ['a{1001}', 'x\\cA', '(?<name>a)', '\\Z']) {
      const rule = parseRule(`title: t\nlogsource: {product: windows}\ndetection:\n    sel:\n        CommandLine|re: '${pattern}'\n    condition: sel\n`);
      const r = compileSigmaForLocal(rule, store);
      expect([pattern, r.ok]).toEqual([pattern, false]);
    }
    const fine = parseRule(`title: t\nlogsource: {product: windows}\ndetection:\n    sel:\n        CommandLine|re: 'a{1000}\\x41[\\d]+(b)'\n    condition: sel\n`);
    expect(compileSigmaForLocal(fine, store).ok).toBe(true);
  });

  it('reads a field literally named * (a wildcard in JSON paths) as that key', async () => {
    const rule = parseRule(`title: t\nlogsource: {product: windows}\ndetection:\n    sel:\n        '*': star\n        'a.*': nested\n    condition: sel\n`);
    const r = compileSigmaForLocal(rule, store);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const events = [{ '*': 'star', a: { '*': 'nested' } }, { '*': 'other', a: { '*': 'nested' } }, { x: 'star' }];
    expect(await store.withFixtureTable(events, (t) => t.matching(r.query))).toEqual([1]);
  });
});
