/**
 * Ingestion benchmark of the local store: `npx tsx bench/ingest.ts [events]` (default 1,000,000).
 * Sysmon process-creation NDJSON (~1 KB/event, the size of a real event 1) ingested as one stream in batches of 100,000 lines into
 * a store file under the OS temp directory; every line is validated and parsed as in production.
 * Target: ≥ 100,000 events/s. Prints events/s, MB/s and peak RSS.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalEventStore } from '../siem/local/event-store';
import { printTable } from './support';

const N = Number(process.argv[2] ?? 1_000_000);
const BATCH = 100_000;
const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

function batchText(offset: number, size: number): string {
  const lines: string[] = [];
  for (let i = offset; i < offset + size; i++) {
    lines.push(
      JSON.stringify({
        UtcTime: new Date(Date.UTC(2024, 0, 1) + i * 250).toISOString(),
        EventID: 1,
        ProcessGuid: `{5770385f-${(i % 65536).toString(16).padStart(4, '0')}-65f1-0b00-000000001f00}`,
        ProcessId: i % 65536,
        Image: `C:\\Windows\\System32\\proc${i % 50}.exe`,
        FileVersion: '10.0.19041.1',
        Description: 'Windows binary',
        Product: 'Microsoft Windows Operating System',
        Company: 'Microsoft Corporation',
        OriginalFileName: `proc${i % 50}.exe`,
        CommandLine: `proc${i % 50}.exe /c something ${i} --output "C:\\Users\\user${i % 500}\\AppData\\Local\\Temp\\run${i}.tmp"`,
        CurrentDirectory: `C:\\Users\\user${i % 500}\\`,
        User: `CORP\\user${i % 500}`,
        LogonGuid: '{5770385f-0000-0000-0000-000000000000}',
        LogonId: '0x3e7',
        TerminalSessionId: 1,
        IntegrityLevel: 'Medium',
        Hashes: `MD5=${(i * 40503).toString(16).padStart(32, '0')},SHA256=${(i * 2654435761).toString(16).padStart(64, '0')},IMPHASH=${(i * 97).toString(16).padStart(32, '0')}`,
        ParentProcessGuid: '{5770385f-0001-65f1-0b00-000000001f00}',
        ParentProcessId: 4242,
        ParentImage: 'C:\\Windows\\explorer.exe',
        ParentCommandLine: 'C:\\Windows\\explorer.exe',
        ParentUser: `CORP\\user${i % 500}`,
        Computer: `ws-${i % 2000}.corp.example`,
        Channel: 'Microsoft-Windows-Sysmon/Operational',
        RuleName: '-',
      }),
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'detflow-ingest-'));
  const store = await LocalEventStore.open({ path: join(dir, 'ingest.duckdb') });
  try {
    let seconds = 0;
    let bytes = 0;
    let accepted = 0;
    for (let offset = 0; offset < N; offset += BATCH) {
      const text = batchText(offset, Math.min(BATCH, N - offset));
      bytes += Buffer.byteLength(text);
      // Only the ingest call is timed: generating the text is the client's work.
      const started = performance.now();
      const r = await store.ingest('bench', { kind: 'ndjson', input: text }, { timestampField: 'UtcTime', logsource: { product: 'windows', category: 'process_creation' } });
      seconds += (performance.now() - started) / 1000;
      if (r.rejected > 0) throw new Error(`unexpected rejections: ${JSON.stringify(r.errors.slice(0, 3))}`);
      accepted += r.accepted;
    }
    printTable([
      { measure: 'NDJSON ingest', events: fmt(accepted), 'events/s': fmt(accepted / seconds), 'MB/s': (bytes / 1e6 / seconds).toFixed(1), note: 'target ≥ 100,000 events/s' },
    ]);
    process.stdout.write(`${(bytes / accepted).toFixed(0)} bytes/event; peak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB\n`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
});
