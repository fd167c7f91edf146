/**
 * Replay benchmark of the local target: `npx tsx bench/replay.ts [events]` (default 10,000,000).
 *   1. generates Windows process-creation events inside DuckDB (range() + hashed choices) into a
 *      fresh store file under the OS temp directory;
 *   2. replays a typical Sigma rule over the whole window through the adapter, chunk by chunk, as
 *      the Replay workflow does (targets: ≥ 5,000,000 events/s and ≥ 80% of the raw query);
 *   3. runs, in the same process, the raw DuckDB query (one hand-written-shape count over the same
 *      window) and the in-process Sigma evaluator (on 1,000,000 JS events) as baselines.
 * Peak RSS is the process's maximum resident set (target ≤ 1 GiB), generation included.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileRule } from '../sigma/evaluate';
import { parseRule } from '../sigma/parse';
import type { CompiledRule } from '../siem/adapter';
import { LocalEventStore } from '../siem/local/event-store';
import { LocalSiemAdapter } from '../siem/local/local-adapter';
import { compileSigmaForLocal } from '../siem/local/sigma-compiler';
import { printTable } from './support';

const N = Number(process.argv[2] ?? 10_000_000);
const DAYS = 30;
const START = Date.UTC(2024, 0, 1);
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

const RULE = parseRule(`title: Encoded PowerShell from an unusual parent
id: 3b6c1c8e-0000-4000-8000-00000000b001
logsource: {category: process_creation, product: windows}
detection:
    selection_img:
        - Image|endswith: ['\\powershell.exe', '\\pwsh.exe']
        - OriginalFileName: ['PowerShell.EXE', 'pwsh.dll']
    selection_cli:
        CommandLine|contains: [' -enc ', ' -EncodedCommand ', 'FromBase64String', 'IEX(', 'DownloadString']
    filter_parent:
        ParentImage|endswith: '\\explorer.exe'
    condition: all of selection_* and not filter_parent
level: high
`);

// Realistic shape: a few common binaries, most command lines benign, ~1% encoded PowerShell.
const IMAGES = [
  ['C:\\Windows\\System32\\svchost.exe', 'svchost.exe'],
  ['C:\\Windows\\System32\\cmd.exe', 'Cmd.Exe'],
  ['C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe', 'PowerShell.EXE'],
  ['C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe', 'chrome.exe'],
  ['C:\\Windows\\System32\\conhost.exe', 'CONHOST.EXE'],
  ['C:\\Program Files\\PowerShell\\7\\pwsh.exe', 'pwsh.dll'],
  ['C:\\Windows\\System32\\rundll32.exe', 'RUNDLL32.EXE'],
  ['C:\\Windows\\explorer.exe', 'EXPLORER.EXE'],
];
const PARENTS = [
  'C:\\Windows\\explorer.exe',
  'C:\\Windows\\System32\\services.exe',
  'C:\\Windows\\System32\\cmd.exe',
  'C:\\Program Files\\Microsoft Office\\root\\Office16\\WINWORD.EXE',
];
const COMMANDS = [
  '-k netsvc -p',
  '/c whoami',
  '-NoProfile -enc SQBFAFgAKABOAGUAdwAtAE8AYgBqAGUAYwB0ACAA',
  '--type=renderer --lang=en-US',
  '0xffffffff -ForceV1',
  'IEX(New-Object Net.WebClient).DownloadString(x)',
  'shell32.dll,Control_RunDLL',
  '',
];

/** A SQL list of string literals. */
function sqlArray(values: readonly string[]): string {
  return `[${values.map((v) => `'${v.replace(/'/g, "''")}'`).join(', ')}]`;
}

/**
 * Generates the events in one INSERT … SELECT over range(): every choice is a hash of the row
 * number, so the data is the same on every run and with any thread count, and rows keep range()
 * order (event_time ascending), as a live feed's would, so row-group min/max statistics are
 * realistic. The JSON text is concatenated from pre-escaped pieces (JSON.stringify in JS) rather
 * than built by json_object(), and the hash-like fields come from hash() rather than md5()/uuid():
 * those three were most of the old generator's time. Promoted columns are picked with the same
 * index as the JSON piece, so they equal json_extract_string(raw, …) as ingestion would store them.
 */
async function generate(store: LocalEventStore): Promise<void> {
  const json = (values: readonly string[]) => sqlArray(values.map((v) => JSON.stringify(v)));
  const images = IMAGES.map((x) => x[0]!);
  const names = IMAGES.map((x) => x[1]!);
  const commandLines = IMAGES.flatMap(([image]) => COMMANDS.map((c) => `${image!.split('\\').pop()} ${c}`));
  const stepUs = Math.floor((DAYS * 86_400e6) / N);
  // Command lines: encoded/IEX variants only 1 time in 64, the rest benign.
  const cmd = `CASE WHEN hash(i * 7) % 64 = 0 THEN 2 + 3 * (hash(i * 11) % 2) ELSE [0, 1, 3, 4, 6, 7][1 + (hash(i * 13) % 6)::INTEGER] END`;
  await store.write(async (con) => {
    await con.run(`INSERT INTO events BY NAME
      SELECT i + 1 AS seq, 'bench' AS tenant_id, 'bench' AS target_id, 'ev-' || i AS event_id, t AS event_time,
             TIMESTAMP '2024-02-01' AS ingested_at, 'windows' AS ls_product, 'process_creation' AS ls_category,
             strlen(raw) AS raw_bytes, raw,
             ${sqlArray(images)}[1 + img] AS "Image", ${sqlArray(names)}[1 + img] AS "OriginalFileName",
             ${sqlArray(PARENTS)}[1 + par] AS "ParentImage", ${sqlArray(commandLines)}[1 + img * ${COMMANDS.length} + cmd] AS "CommandLine",
             'CORP\\user' || usr AS "User", 'ws-' || host || '.corp.example' AS "Computer",
             '1' AS "EventID", (i % 65536)::VARCHAR AS "ProcessId", 'Medium' AS "IntegrityLevel"
      FROM (
        SELECT *, concat(
          '{"EventID":1,"UtcTime":"', strftime(t, '%Y-%m-%d %H:%M:%S.%g'),
          '","ProcessGuid":"{', printf('%08x-%04x-%04x-%04x-%012x', h1 >> 32, (h1 >> 16) & 65535, h1 & 65535, h2 >> 48, h2 & 281474976710655),
          '}","ProcessId":', i % 65536,
          ',"Image":', ${json(images)}[1 + img],
          ',"FileVersion":"10.0.19041.1","Description":"Windows binary","Product":"Microsoft Windows Operating System","Company":"Microsoft Corporation"',
          ',"OriginalFileName":', ${json(names)}[1 + img],
          ',"CommandLine":', ${json(commandLines)}[1 + img * ${COMMANDS.length} + cmd],
          ',"CurrentDirectory":"C:\\\\Windows\\\\system32\\\\","User":"CORP\\\\user', usr,
          '","LogonId":"0x3e7","IntegrityLevel":"Medium","Hashes":"SHA256=', printf('%016x%016x%016x%016x', h1, h2, hash(i * 23), hash(i * 29)),
          '","ParentImage":', ${json(PARENTS)}[1 + par], ',"ParentCommandLine":', ${json(PARENTS)}[1 + par],
          ',"Computer":"ws-', host, '.corp.example"}') AS raw
        FROM (
          SELECT i, TIMESTAMP '2024-01-01' + to_microseconds(i * ${stepUs}) AS t, hash(i) AS h1, hash(i + ${N}) AS h2,
                 (hash(i * 3) % ${IMAGES.length})::INTEGER AS img, (hash(i * 5) % ${PARENTS.length})::INTEGER AS par, (${cmd})::INTEGER AS cmd,
                 hash(i * 17) % 500 AS usr, hash(i * 19) % 2000 AS host
          FROM range(${N}) r(i)
        )
      )`);
    // The replay and the raw query read the promoted columns; a generator bug that made them differ
    // from the JSON would measure a different rule than ingestion would store.
    const promoted = ['Image', 'OriginalFileName', 'ParentImage', 'CommandLine', 'User', 'Computer', 'EventID', 'ProcessId', 'IntegrityLevel'];
    const mismatch = (
      await con.runAndReadAll(
        `SELECT count(*) AS n FROM (FROM events LIMIT 100000) WHERE NOT json_valid(raw) OR ${promoted.map((f) => `"${f}" IS DISTINCT FROM json_extract_string(raw, '$.${f}')`).join(' OR ')}`,
      )
    ).getRowObjects()[0]!.n;
    if (Number(mismatch) !== 0) throw new Error(`generator bug: ${mismatch} of the first 100,000 events have promoted columns that differ from their JSON`);
    await con.run(`INSERT INTO ingest_batches VALUES ('bench-generated', 'bench', 1, ${N}, ${N}, ${N}, 0, now()::TIMESTAMP)`);
    await con.run('CHECKPOINT');
  });
}

function jsEvent(i: number): Record<string, unknown> {
  const [image, ofn] = IMAGES[i % IMAGES.length]!;
  return {
    EventID: 1,
    Image: image,
    OriginalFileName: ofn,
    ParentImage: PARENTS[(i >> 3) % PARENTS.length],
    CommandLine: `${image!.split('\\').pop()} ${COMMANDS[i % 64 === 0 ? 2 : (i >> 5) % 8]}`,
    User: `CORP\\user${i % 500}`,
    Computer: `ws-${i % 2000}.corp.example`,
    IntegrityLevel: 'Medium',
  };
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'detflow-replay-'));
  const path = join(dir, 'replay.duckdb');
  const generator = await LocalEventStore.open({ path, memoryLimit: '512MB' });
  let t = performance.now();
  try {
    await generate(generator);
  } finally {
    await generator.close();
  }
  // Reopened as a replay worker would find it; opening fills the hourly summary that the
  // generator, writing the events table directly, did not.
  const store = await LocalEventStore.open({ path, memoryLimit: '512MB' });
  try {
    const genSeconds = (performance.now() - t) / 1000;
    process.stdout.write(`generated ${fmt(N)} events in ${genSeconds.toFixed(1)} s\n`);

    const adapter = new LocalSiemAdapter({ store, compiler: compileSigmaForLocal });
    const compiled = adapter.compile(RULE);
    if (!compiled.ok) throw new Error(`rule does not compile: ${JSON.stringify(compiled.issues)}`);
    const rule: CompiledRule = { ruleId: 'bench', version: 1, query: compiled.query, ...(compiled.logsource ? { logsource: compiled.logsource } : {}) };
    const window = { from: new Date(START), to: new Date(START + DAYS * 86_400_000) };

    // Warm-up: first touch of the file's blocks is I/O, not query work.
    await store.count('bench', 'bench', rule.query, window, rule.logsource);

    const rounds = 3;
    let replayBest = 0;
    let matched = 0;
    let scanned = 0;
    let chunks = 0;
    for (let r = 0; r < rounds; r++) {
      t = performance.now();
      const plan = await adapter.planChunks('bench', 'bench', window, 2_500_000);
      matched = 0;
      scanned = 0;
      for (const chunk of plan) {
        const c = await adapter.count('bench', 'bench', rule, chunk);
        matched += c.matched;
        scanned += c.scanned;
      }
      chunks = plan.length;
      replayBest = Math.max(replayBest, scanned / ((performance.now() - t) / 1000));
    }

    const rawSql = `SELECT count(*) AS n FROM events WHERE tenant_id = 'bench' AND event_time >= TIMESTAMP '2024-01-01' AND event_time < TIMESTAMP '2024-01-31'
                    AND ls_product = 'windows' AND ls_category = 'process_creation' AND coalesce((${rule.query}), false)`;
    let rawBest = 0;
    let rawMatched = 0;
    for (let r = 0; r < rounds; r++) {
      t = performance.now();
      rawMatched = await store.read(async (con) => Number((await con.runAndReadAll(rawSql)).getRowObjects()[0]!.n));
      rawBest = Math.max(rawBest, N / ((performance.now() - t) / 1000));
    }
    if (rawMatched !== matched) throw new Error(`replay matched ${matched} but the raw query ${rawMatched}`);
    const replayRss = process.resourceUsage().maxRSS * 1024;

    const matcher = compileRule(RULE).match;
    const evalEvents = 1_000_000;
    const batch = Array.from({ length: 100_000 }, (_, i) => jsEvent(i));
    let evalBest = 0;
    let evalMatched = 0;
    for (let r = 0; r < rounds; r++) {
      t = performance.now();
      evalMatched = 0;
      for (let k = 0; k < evalEvents / batch.length; k++) for (const e of batch) if (matcher(e)) evalMatched++;
      evalBest = Math.max(evalBest, evalEvents / ((performance.now() - t) / 1000));
    }

    printTable([
      { measure: 'replay via adapter (chunked)', 'events/s': fmt(replayBest), matched: fmt(matched), note: `${chunks} chunks, ${fmt(scanned)} scanned; target ≥ 5,000,000` },
      {
        measure: 'raw DuckDB query (baseline)',
        'events/s': fmt(rawBest),
        matched: fmt(rawMatched),
        note: `replay = ${((replayBest / rawBest) * 100).toFixed(0)}% of raw; target ≥ 80%`,
      },
      { measure: 'in-process evaluator (baseline)', 'events/s': fmt(evalBest), matched: fmt(evalMatched), note: `${fmt(evalEvents)} JS events` },
    ]);
    process.stdout.write(`peak RSS through replay and raw query: ${(replayRss / 2 ** 20).toFixed(0)} MiB (target ≤ 1024 MiB)\n`);
    process.stdout.write(`rule WHERE: ${rule.query}\n`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
