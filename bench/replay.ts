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
const PARENTS = ['C:\\Windows\\explorer.exe', 'C:\\Windows\\System32\\services.exe', 'C:\\Windows\\System32\\cmd.exe', 'C:\\Program Files\\Microsoft Office\\root\\Office16\\WINWORD.EXE'];
const COMMANDS = ['-k netsvc -p', '/c whoami', '-NoProfile -enc SQBFAFgAKABOAGUAdwAtAE8AYgBqAGUAYwB0ACAA', '--type=renderer --lang=en-US', '0xffffffff -ForceV1', 'IEX(New-Object Net.WebClient).DownloadString(x)', 'shell32.dll,Control_RunDLL', ''];

function sqlArray(values: string[]): string {
  return `[${values.map((v) => `'${v.replace(/'/g, "''")}'`).join(', ')}]`;
}

async function generate(store: LocalEventStore): Promise<void> {
  const pick = (arr: string, salt: number, n: number) => `${arr}[1 + (hash(i * ${salt}) % ${n})::INTEGER]`;
  // Command lines: encoded/IEX variants only 1 time in 64, the rest benign.
  const cmdIdx = `CASE WHEN hash(i * 7) % 64 = 0 THEN 3 + 3 * (hash(i * 11) % 2)::INTEGER ELSE [1, 2, 4, 5, 7, 8][1 + (hash(i * 13) % 6)::INTEGER] END`;
  await store.write(async (con) => {
    await con.run(`INSERT INTO events BY NAME
      SELECT i + 1 AS seq, 'bench' AS tenant_id, 'ev-' || i AS event_id,
             TIMESTAMP '2024-01-01' + to_microseconds((i * ${Math.floor((DAYS * 86_400e6) / N)})::BIGINT) AS event_time,
             TIMESTAMP '2024-02-01' AS ingested_at, 'windows' AS ls_product, 'process_creation' AS ls_category, NULL AS ls_service,
             strlen(raw) AS raw_bytes, raw, "Image", "OriginalFileName", "ParentImage", "CommandLine", "User", "Computer", "EventID", "ProcessId", "IntegrityLevel"
      FROM (
        SELECT i, "Image", "OriginalFileName", "ParentImage", "CommandLine", "User", "Computer", "EventID", "ProcessId", "IntegrityLevel",
               json_object('EventID', 1, 'UtcTime', strftime(TIMESTAMP '2024-01-01' + to_microseconds((i * ${Math.floor((DAYS * 86_400e6) / N)})::BIGINT), '%Y-%m-%d %H:%M:%S.%g'),
                 'ProcessGuid', '{' || uuid() || '}', 'ProcessId', i % 65536, 'Image', "Image", 'FileVersion', '10.0.19041.1', 'Description', 'Windows binary',
                 'Product', 'Microsoft Windows Operating System', 'Company', 'Microsoft Corporation', 'OriginalFileName', "OriginalFileName",
                 'CommandLine', "CommandLine", 'CurrentDirectory', 'C:\\Windows\\system32\\', 'User', "User", 'LogonId', '0x3e7', 'IntegrityLevel', "IntegrityLevel",
                 'Hashes', 'SHA256=' || md5(i::VARCHAR) || md5((i + 1)::VARCHAR), 'ParentImage', "ParentImage", 'ParentCommandLine', "ParentImage", 'Computer', "Computer")::VARCHAR AS raw
        FROM (
          SELECT i,
                 ${pick(sqlArray(IMAGES.map((x) => x[0]!)), 3, IMAGES.length)} AS "Image",
                 ${pick(sqlArray(IMAGES.map((x) => x[1]!)), 3, IMAGES.length)} AS "OriginalFileName",
                 ${pick(sqlArray(PARENTS), 5, PARENTS.length)} AS "ParentImage",
                 ${sqlArray(IMAGES.map((x) => x[0]!.split('\\').pop()!))}[1 + (hash(i * 3) % ${IMAGES.length})::INTEGER] || ' ' || ${sqlArray(COMMANDS)}[${cmdIdx}] AS "CommandLine",
                 'CORP\\user' || (hash(i * 17) % 500)::VARCHAR AS "User",
                 'ws-' || (hash(i * 19) % 2000)::VARCHAR || '.corp.example' AS "Computer",
                 '1' AS "EventID", (i % 65536)::VARCHAR AS "ProcessId", 'Medium' AS "IntegrityLevel"
          FROM range(${N}) t(i)
        )
      )`);
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
  const store = await LocalEventStore.open({ path: join(dir, 'replay.duckdb'), memoryLimit: '512MB' });
  try {
    let t = performance.now();
    await generate(store);
    const genSeconds = (performance.now() - t) / 1000;
    process.stdout.write(`generated ${fmt(N)} events in ${genSeconds.toFixed(1)} s\n`);

    const adapter = new LocalSiemAdapter({ store, compiler: compileSigmaForLocal });
    const compiled = adapter.compile(RULE);
    if (!compiled.ok) throw new Error(`rule does not compile: ${JSON.stringify(compiled.issues)}`);
    const rule: CompiledRule = { ruleId: 'bench', version: 1, query: compiled.query, ...(compiled.logsource ? { logsource: compiled.logsource } : {}) };
    const window = { from: new Date(START), to: new Date(START + DAYS * 86_400_000) };

    // Warm-up: first touch of the file's blocks is I/O, not query work.
    await store.count('bench', rule.query, window, rule.logsource);

    const rounds = 3;
    let replayBest = 0;
    let matched = 0;
    let scanned = 0;
    let chunks = 0;
    for (let r = 0; r < rounds; r++) {
      t = performance.now();
      const plan = await adapter.planChunks('bench', window, 2_500_000);
      matched = 0;
      scanned = 0;
      for (const chunk of plan) {
        const c = await adapter.count('bench', rule, chunk);
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
      { measure: 'raw DuckDB query (baseline)', 'events/s': fmt(rawBest), matched: fmt(rawMatched), note: `replay = ${((replayBest / rawBest) * 100).toFixed(0)}% of raw; target ≥ 80%` },
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
