import fs from 'node:fs';
import path from 'node:path';
import { runCli, startCliTestBed, stopCliTestBed } from '../support/cli';
import { lintBrokenRule, type TestService } from '../support/harness';
import { sarifSchemaErrors } from '../support/sarif-schema';

const ROOT = path.join(__dirname, '../..');
const EXAMPLE_RULE = path.join(ROOT, 'examples/rules/schtasks_temp_payload.yml');
const EXAMPLE_RULE_ID = '4f1c2a7e-93d5-4b8e-a0c6-2d7e5b9f8a31';

const HOUR = 3_600_000;
/** Three days of events ending an hour ago: one benign event an hour, and a payload task every sixth hour. */
function events(): { lines: string[]; matching: number } {
  const end = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
  const lines: string[] = [];
  let matching = 0;
  for (let h = 72; h > 0; h--) {
    const t = end - h * HOUR;
    lines.push(JSON.stringify({ '@timestamp': new Date(t).toISOString(), Image: 'C:\\Windows\\notepad.exe', CommandLine: 'notepad.exe', Computer: 'ws-1', User: 'bob' }));
    if (h % 6 === 0) {
      matching++;
      lines.push(
        JSON.stringify({
          '@timestamp': new Date(t + 60_000).toISOString(),
          Image: 'C:\\Windows\\System32\\schtasks.exe',
          CommandLine: `schtasks.exe /create /sc onlogon /tn Updater${h} /tr C:\\Users\\ana\\AppData\\Local\\Temp\\upd${h}.exe`,
          Computer: `ws-${h % 3}`,
          User: 'ana',
        }),
      );
    }
  }
  return { lines, matching };
}

/**
 * The report formats CI systems read, from the real binary against the real service: SARIF for code
 * scanning, Markdown for job summaries and merge-request notes, and `detflow replay`.
 */
describe('detflow report formats and detflow replay (the real binary against the real service)', () => {
  let svc: TestService;
  let dir: string;
  let env: Record<string, string>;
  /** A git work tree with the rules in detections/, the command run from there as a CI job would. */
  let detections: string;
  const run = (...args: string[]) => runCli(args, { env, cwd: detections, timeoutMs: 120_000 });
  const data = events();

  beforeAll(async () => {
    ({ svc, dir, env } = await startCliTestBed('detflow-cli-reports-'));
    fs.mkdirSync(path.join(dir, '.git'));
    detections = path.join(dir, 'detections');
    fs.mkdirSync(detections);
    fs.writeFileSync(path.join(detections, 'broken.yml'), lintBrokenRule('7d0e8a52-6c1b-4f3e-9a27-0b5c4d3e2f10'));
    fs.copyFileSync(EXAMPLE_RULE, path.join(detections, 'schtasks.yml'));
    fs.cpSync(EXAMPLE_RULE.replace(/\.yml$/, '.fixtures'), path.join(detections, 'schtasks.fixtures'), { recursive: true });
    const ingest = await svc.request('POST', '/api/v1/events?product=windows&category=process_creation', {
      body: data.lines.join('\n'),
      headers: { 'content-type': 'application/x-ndjson' },
    });
    expect(ingest.body.accepted).toBe(data.lines.length);
  }, 120_000);
  afterAll(() => stopCliTestBed({ svc, dir }));

  describe('lint --format sarif', () => {
    it('writes a SARIF 2.1.0 log that validates against the schema, with findings at their lines and columns relative to the repository', async () => {
      const r = await run('lint', 'broken.yml', 'schtasks.yml', '--target', 'local', '--format', 'sarif', '--output', '../reports/lint.sarif');
      expect(r.stderr).toBe('');
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('lint (local): 2 files, 3 errors, 2 warnings, 4 info — 1 file failed\nsarif report written to ../reports/lint.sarif\n');
      const log = JSON.parse(fs.readFileSync(path.join(dir, 'reports/lint.sarif'), 'utf8'));
      expect(sarifSchemaErrors(log)).toEqual([]);
      expect(log.version).toBe('2.1.0');
      const [sarifRun] = log.runs;
      expect(sarifRun.tool.driver.name).toBe('detflow');
      const at = (r: any) => {
        const loc = r.locations[0].physicalLocation;
        return `${loc.artifactLocation.uri}:${loc.region.startLine}:${loc.region.startColumn} ${r.level} ${r.ruleId}`;
      };
      const seen = sarifRun.results.map(at);
      expect(seen).toEqual(
        expect.arrayContaining([
          'detections/broken.yml:9:5 error modifier-unknown',
          'detections/broken.yml:10:28 error condition-undefined-identifier',
          'detections/schtasks.yml:19:5 note perf_contains_high_volume_field',
        ]),
      );
      expect(seen).toHaveLength(9);
      for (const result of sarifRun.results) {
        expect(result.locations[0].physicalLocation.artifactLocation.uriBaseId).toBe('%SRCROOT%');
        expect(sarifRun.tool.driver.rules[result.ruleIndex].id).toBe(result.ruleId);
      }
    });
  });

  describe('--format markdown', () => {
    it('summarises lint with the counts, then the errors by file and position', async () => {
      const r = await run('lint', 'broken.yml', 'schtasks.yml', '--target', 'local', '--format', 'markdown');
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/^### detflow lint \(local\): ❌ 1 file failed\n/);
      expect(r.stdout).toContain('| 2 | 1 | 3 | 2 | 4 |');
      expect(r.stdout).toContain("| <code>broken.yml</code> | 9:5 | error | <code>modifier-unknown</code> | unknown modifier 'endswithh' |");
      // Errors come before warnings, and info is folded away.
      expect(r.stdout.indexOf('| error |')).toBeLessThan(r.stdout.indexOf('| warning |'));
      expect(r.stdout).toContain('<details><summary>4 info findings</summary>');
    });

    it('summarises a passing test run with its counts and coverage', async () => {
      const r = await run('test', 'schtasks.yml', '--target', 'local', '--format', 'markdown', '--output', '../reports/test.md');
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('test (local): 1 rule, 4 fixtures, 4 passed, 0 failed — passed\nmarkdown report written to ../reports/test.md\n');
      const md = fs.readFileSync(path.join(dir, 'reports/test.md'), 'utf8');
      expect(md).toMatch(/^### detflow test \(local\): ✅ passed\n/);
      expect(md).toContain('| 1 | 4 | 4 | 0 |');
      expect(md).toMatch(new RegExp(`\\| <code>schtasks.yml</code> \\| <code>${EXAMPLE_RULE_ID}</code> v1 \\| 4/4 \\| \\d+% \\| ✅ passed \\|`));
      expect(md).not.toContain('Failed fixtures');
    });
  });

  describe('replay', () => {
    it('pushes a rule file, replays it and reports events, alerts, alerts/day with its interval, cost and confidence as JSON', async () => {
      const r = await run('replay', 'schtasks.yml', '--target', 'local', '--window', 'P7D', '--format', 'json');
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('replaying schtasks.yml on local over P7D…\n');
      const json = JSON.parse(r.stdout);
      expect(json).toMatchObject({ target: 'local', window: 'P7D', passed: true });
      const [one] = json.results;
      expect(one).toMatchObject({ file: 'schtasks.yml', passed: true, pushed: { rule_id: EXAMPLE_RULE_ID } });
      expect(one.replay).toMatchObject({ rule_id: EXAMPLE_RULE_ID, version: one.pushed.version, target: 'local', status: 'completed' });
      const result = one.replay.result;
      expect(result.events_scanned).toBe(data.lines.length);
      expect(result.alerts.total).toBe(data.matching);
      expect(result.alerts_per_day.ci95.low).toBeLessThan(result.alerts_per_day.estimate);
      expect(result.alerts_per_day.ci95.high).toBeGreaterThan(result.alerts_per_day.estimate);
      expect(typeof result.cost.per_month).toBe('number');
      expect(typeof result.low_confidence).toBe('boolean');
      // The run is the service's own record: the same figures read back through the API.
      const stored = await svc.request('GET', `/api/v1/replays/${one.replay.id}`);
      expect(stored.body.result.alerts.total).toBe(data.matching);
    });

    it('replays a stored rule by its id into a Markdown summary file', async () => {
      const r = await run('replay', EXAMPLE_RULE_ID, '--target', 'local', '--format', 'markdown', '--output', '../reports/replay.md');
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('replay (local, P7D): 1 rule, 1 completed — passed\nmarkdown report written to ../reports/replay.md\n');
      const md = fs.readFileSync(path.join(dir, 'reports/replay.md'), 'utf8');
      expect(md).toMatch(/^### detflow replay \(local, last P7D\): ✅ passed\n/);
      expect(md).toContain('| Rule | Status | Events | Alerts | Alerts/day (95% CI) | Cost/month | Confidence |');
      const row = md.split('\n').find((l) => l.includes('✅ completed'))!;
      const cells = row.split(' | ');
      expect(cells[0]).toMatch(new RegExp(`^\\| <code>${EXAMPLE_RULE_ID}</code> v\\d+$`));
      expect(cells[2]).toBe(String(data.lines.length));
      expect(cells[3]).toBe(String(data.matching));
      expect(cells[4]).toMatch(/^\d+\.\d\d \(\d+\.\d\d–\d+\.\d\d\)$/);
      expect(cells[5]).toMatch(/^\d+\.\d\d [A-Z]{3}$/);
    });

    it('exits 1 when a rule goes over its noise budget, and prints why in the text report', async () => {
      const r = await run('replay', 'schtasks.yml', '--target', 'local', '--budget', '0');
      expect(r.code).toBe(1);
      expect(r.stdout).toMatch(/^completed schtasks\.yml → 4f1c2a7e-93d5-4b8e-a0c6-2d7e5b9f8a31 v\d+ on local, /);
      expect(r.stdout).toMatch(/\n {2}events \d+ · alerts \d+ · \d+\.\d\d alerts\/day \(95% CI [\d.]+–[\d.]+\) · cost [\d.]+ \w{3} over [\d.]+ days, [\d.]+ \w{3}\/month/);
      expect(r.stdout).toMatch(/\n {2}failed: over its noise budget of 0 alerts\/day on \d+ days?\n/);
      expect(r.stdout.trimEnd().split('\n').at(-1)).toBe('replay (local, P7D): 1 rule, 1 completed — 1 rule failed');
    });

    it('exits 1 for a rule file the registry refuses, and still replays the others', async () => {
      fs.writeFileSync(path.join(dir, 'not-a-rule.yml'), 'title: [unclosed\n');
      const r = await run('replay', '../not-a-rule.yml', 'schtasks.yml', '--target', 'local', '--format', 'json');
      expect(r.code).toBe(1);
      const json = JSON.parse(r.stdout);
      expect(json.results.map((x: any) => [x.file, x.passed])).toEqual([
        ['../not-a-rule.yml', false],
        ['schtasks.yml', true],
      ]);
      expect(json.results[0].reason).toMatch(/^the registry refused the rule: /);
    });

    it('gives up at --timeout with exit 2, and cancels the replay it gave up on', async () => {
      // No worker: the replay starts and makes no progress, as one stuck behind a busy tier would.
      await svc.stopWorker();
      let r;
      try {
        r = await run('replay', EXAMPLE_RULE_ID, '--target', 'local', '--timeout', '2');
      } finally {
        await svc.startWorker();
      }
      expect(r.code).toBe(2);
      const id = /replay ([0-9a-f-]{36}) of /.exec(r.stderr)?.[1];
      expect(r.stderr).toContain(`Gave up after 2 s: replay ${id} of ${EXAMPLE_RULE_ID} on local was still running; cancelled it`);
      // The worker back, the run takes the cancellation it was sent and ends cancelled, not completed.
      const ended = await svc.request('GET', `/api/v1/replays/${id}?wait=30`);
      expect(ended.body.status).toBe('cancelled');
    });

    it('exits 2 for misuse and for what the service refuses outright (an unknown rule id or target)', async () => {
      const badWindow = await run('replay', 'schtasks.yml', '--target', 'local', '--window', '7 days');
      expect(badWindow.code).toBe(2);
      expect(badWindow.stderr).toContain('expected an ISO 8601 duration such as P7D or PT12H');
      const missingFile = await run('replay', 'typo.yml', '--target', 'local');
      expect(missingFile.code).toBe(2);
      expect(missingFile.stderr).toContain('No such rule file or directory: typo.yml');
      const unknownRule = await run('replay', 'no-such-rule', '--target', 'local');
      expect(unknownRule.code).toBe(2);
      expect(unknownRule.stderr).toMatch(/POST \/rules\/replay → 404/);
      const unknownTarget = await run('replay', EXAMPLE_RULE_ID, '--target', 'nowhere');
      expect(unknownTarget.code).toBe(2);
      expect(unknownTarget.stderr).toContain('No target nowhere in this tenant');
      const noFormat = await run('replay', EXAMPLE_RULE_ID, '--target', 'local', '--format', 'sarif');
      expect(noFormat.code).toBe(2);
      expect(noFormat.stderr).toContain('Allowed choices are text, json, markdown');
    });
  });
});
