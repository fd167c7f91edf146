import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { runCli, startCliTestBed, stopCliTestBed, type CliEnv } from '../support/cli';
import { lintBrokenRule, type TestService } from '../support/harness';

const ROOT = path.join(__dirname, '../..');
const EXAMPLE_RULE = path.join(ROOT, 'examples/rules/schtasks_temp_payload.yml');
const EXAMPLE_RULE_ID = '4f1c2a7e-93d5-4b8e-a0c6-2d7e5b9f8a31';

const BROKEN = lintBrokenRule('7d0e8a52-6c1b-4f3e-9a27-0b5c4d3e2f10');

const cli = (args: string[], env: CliEnv, cwd: string) => runCli(args, { env, cwd });

type JUnitCaseSeen = { suite: string; name: string; file: string | undefined; failure?: { message: string; body: string }; error?: { message: string }; systemOut?: string };

const unescapeXml = (s: string) =>
  s.replace(/&(#\d+|lt|gt|amp|quot|apos);/g, (_, e: string) =>
    e.startsWith('#') ? String.fromCharCode(Number(e.slice(1))) : { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" }[e]!,
  );

function attributesOf(tag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [, k, v] of tag.matchAll(/([\w:-]+)="([^"]*)"/g)) out[k!] = unescapeXml(v!);
  return out;
}

/** Enough of a JUnit reader for these reports: suites with their counts, and each case's outcome. */
function readJUnit(xml: string) {
  expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites ')).toBe(true);
  expect(xml.trimEnd().endsWith('</testsuites>')).toBe(true);
  const root = attributesOf(/<testsuites ([^>]*)>/.exec(xml)![1]!);
  const suites: Array<Record<string, string>> = [];
  const cases: JUnitCaseSeen[] = [];
  for (const [, suiteAttrs, body] of xml.matchAll(/<testsuite ([^>]*)>([\s\S]*?)<\/testsuite>/g)) {
    const suite = attributesOf(suiteAttrs!);
    suites.push(suite);
    for (const [, caseAttrs, closing, inner] of body!.matchAll(/<testcase ([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g)) {
      const a = attributesOf(caseAttrs!);
      const seen: JUnitCaseSeen = { suite: suite.name!, name: a.name!, file: a.file };
      if (closing !== '/>') {
        const failure = /<failure ([^>]*)>([\s\S]*?)<\/failure>/.exec(inner!);
        if (failure) seen.failure = { message: attributesOf(failure[1]!).message!, body: unescapeXml(failure[2]!) };
        const error = /<error ([^>]*)>/.exec(inner!);
        if (error) seen.error = { message: attributesOf(error[1]!).message! };
        const out = /<system-out>([\s\S]*?)<\/system-out>/.exec(inner!);
        if (out) seen.systemOut = unescapeXml(out[1]!);
      }
      cases.push(seen);
    }
  }
  return { root, suites, cases };
}

describe('detflow CLI (the real binary against the real service)', () => {
  let svc: TestService;
  let dir: string;
  let env: Record<string, string>;
  const run = (...args: string[]) => cli(args, env, dir);

  beforeAll(async () => {
    ({ svc, dir, env } = await startCliTestBed('detflow-cli-'));
    fs.writeFileSync(path.join(dir, 'broken.yml'), BROKEN);
  });
  afterAll(() => stopCliTestBed({ svc, dir }));

  describe('lint', () => {
    it('passes a clean rule with exit 0, printing findings as file:line:column and a summary', async () => {
      const r = await run('lint', EXAMPLE_RULE, '--target', 'local');
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const lines = r.stdout.trimEnd().split('\n');
      expect(lines.at(-1)).toBe('lint (local): 1 file, 0 errors, 0 warnings, 3 info — passed');
      expect(lines[0]).toBe(`${EXAMPLE_RULE}:19:5: info [perf_contains_high_volume_field] 'contains' on high-volume field CommandLine`);
    });

    it('fails a rule with errors with exit 1 and a JUnit failure that lists the errors by position', async () => {
      const text = await run('lint', 'broken.yml', '--target', 'local');
      expect(text.code).toBe(1);
      expect(text.stdout).toContain('broken.yml:9:5: error [modifier-unknown] unknown modifier');
      expect(text.stdout).toContain("broken.yml:10:28: error [condition-undefined-identifier] condition references undefined identifier 'filter'");
      expect(text.stdout.trimEnd().split('\n').at(-1)).toMatch(/^lint \(local\): 1 file, 3 errors, 2 warnings, 1 info — 1 file failed$/);

      const junit = await run('lint', 'broken.yml', EXAMPLE_RULE, '--target', 'local', '--format', 'junit', '--output', 'reports/lint.xml');
      expect(junit.code).toBe(1);
      // With --output the terminal gets the summary only; the report goes to the file.
      expect(junit.stdout).toBe('lint (local): 2 files, 3 errors, 2 warnings, 4 info — 1 file failed\njunit report written to reports/lint.xml\n');
      const report = readJUnit(fs.readFileSync(path.join(dir, 'reports/lint.xml'), 'utf8'));
      expect(report.root).toMatchObject({ tests: '2', failures: '1', errors: '0' });
      expect(report.suites.map((s) => [s.name, s.tests, s.failures])).toEqual([
        ['broken.yml', '1', '1'],
        [EXAMPLE_RULE, '1', '0'],
      ]);
      const [broken, clean] = report.cases;
      expect(broken!.failure!.message).toBe('3 lint errors');
      expect(broken!.failure!.body.split('\n')).toEqual([
        "broken.yml:9:5: error [modifier-unknown] unknown modifier 'endswithh'",
        "broken.yml:9:5: error [target_unsupported] local target local cannot express this exactly: unknown modifier 'endswithh'",
        "broken.yml:10:28: error [condition-undefined-identifier] condition references undefined identifier 'filter'",
      ]);
      expect(broken!.systemOut).toMatch(/^broken\.yml:\d+:\d+: warning \[/);
      expect(clean!.failure).toBeUndefined();
      expect(clean!.systemOut).toContain('info [perf_contains_high_volume_field]');
    });

    it('reports the full lint result per file as JSON', async () => {
      const r = await run('lint', EXAMPLE_RULE, '--target', 'local', '--format', 'json');
      expect(r.code).toBe(0);
      const json = JSON.parse(r.stdout);
      expect(json).toMatchObject({ target: 'local', passed: true, counts: { error: 0, warning: 0, info: 3 } });
      expect(json.results[0]).toMatchObject({ file: EXAMPLE_RULE, valid: true, target: { name: 'local', kind: 'local' } });
      expect(json.results[0].query).toContain('schtasks.exe');
    });

    it('lints offline without DETFLOW_URL, with the same findings the service reports', async () => {
      const offline = await cli(['lint', '--offline', 'broken.yml', EXAMPLE_RULE, '--format', 'json'], {}, dir);
      const online = await run('lint', 'broken.yml', EXAMPLE_RULE, '--target', 'local', '--format', 'json');
      expect(offline.code).toBe(1);
      const positions = (out: string) => JSON.parse(out).results.map((r: any) => r.findings.map((f: any) => `${f.line}:${f.column} ${f.severity} ${f.code}`));
      expect(positions(offline.stdout)).toEqual(positions(online.stdout));
      expect(positions(offline.stdout)[0].length).toBeGreaterThan(0);

      const clean = await cli(['lint', '--offline', EXAMPLE_RULE, '--target-kind', 'splunk'], {}, dir);
      expect(clean.code).toBe(0);
      expect(clean.stdout).toContain('lint (offline-splunk): 1 file, 0 errors');
    });

    it('exits 2 for an unknown target, naming it', async () => {
      const r = await run('lint', EXAMPLE_RULE, '--target', 'no-such-target');
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('No target no-such-target in this tenant');
      expect(r.stdout).toBe('');
    });

    it('exits 2 when called wrongly: no target, or --target with --offline', async () => {
      const noTarget = await run('lint', EXAMPLE_RULE);
      expect(noTarget.code).toBe(2);
      expect(noTarget.stderr).toContain('lint needs --target <name>');
      const both = await run('lint', '--offline', '--target', 'local', EXAMPLE_RULE);
      expect(both.code).toBe(2);
      expect(both.stderr).toContain('with --offline use --target-kind');
      const badFormat = await run('lint', '--offline', '--format', 'xml', EXAMPLE_RULE);
      expect(badFormat.code).toBe(2);
      expect(badFormat.stderr).toContain('Allowed choices are text, json, junit');
    });
  });

  describe('test', () => {
    it('pushes the rule and passes its fixtures (a file may hold an array of them) with exit 0', async () => {
      const r = await run('test', EXAMPLE_RULE, '--target', 'local', '--format', 'junit', '--output', 'reports/test.xml');
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toBe('test (local): 1 rule, 4 fixtures, 4 passed, 0 failed — passed\njunit report written to reports/test.xml\n');
      const report = readJUnit(fs.readFileSync(path.join(dir, 'reports/test.xml'), 'utf8'));
      expect(report.root).toMatchObject({ tests: '4', failures: '0', errors: '0' });
      expect(report.suites.map((s) => s.name)).toEqual([EXAMPLE_RULE]);
      const fixtures = path.join(ROOT, 'examples/rules/schtasks_temp_payload.fixtures');
      expect(report.cases.map((c) => [c.name, c.file])).toEqual([
        ["task starting a payload from the user's temp folder", path.join(fixtures, '01-user-temp-payload.json')],
        ['task starting a program from Program Files', path.join(fixtures, '02-benign.json')],
        ['querying tasks that mention the temp folder', path.join(fixtures, '02-benign.json')],
        ["Google's updater task", path.join(fixtures, '02-benign.json')],
      ]);
      expect(report.cases.every((c) => !c.failure && !c.error)).toBe(true);
      // The registry now holds the rule file, as the test pushed it first.
      const stored = await svc.request('GET', `/api/v1/rules/${EXAMPLE_RULE_ID}`);
      expect(stored.status).toBe(200);
      expect(stored.body.title).toBe('Scheduled Task Running a Payload From a Temp Folder');
    });

    it('fails with exit 1 when a fixture fails, with the reason in the text and in the JUnit failure', async () => {
      const fixtures = path.join(dir, 'failing.fixtures');
      fs.mkdirSync(fixtures);
      const event = { Image: 'C:\\Windows\\System32\\schtasks.exe', CommandLine: 'schtasks /create /tn x /tr C:\\Windows\\Temp\\x.exe' };
      fs.writeFileSync(path.join(fixtures, 'a-match.json'), JSON.stringify({ name: 'creates from temp', expect: 'match', event }));
      fs.writeFileSync(path.join(fixtures, 'b-wrong.json'), JSON.stringify({ name: 'wrongly expected quiet', expect: 'no_match', event }));

      const text = await run('test', EXAMPLE_RULE, '--fixtures', fixtures, '--target', 'local');
      expect(text.code).toBe(1);
      expect(text.stdout).toContain(`  PASS creates from temp (${path.join(fixtures, 'a-match.json')})`);
      expect(text.stdout).toMatch(new RegExp(`  FAIL wrongly expected quiet \\(${path.join(fixtures, 'b-wrong.json').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\): .+`));
      expect(text.stdout.trimEnd().split('\n').at(-1)).toBe('test (local): 1 rule, 2 fixtures, 1 passed, 1 failed — 1 rule failed');

      const junit = await run('test', EXAMPLE_RULE, '--fixtures', fixtures, '--target', 'local', '--format', 'junit');
      expect(junit.code).toBe(1);
      const report = readJUnit(junit.stdout);
      expect(report.root).toMatchObject({ tests: '2', failures: '1', errors: '0' });
      const failed = report.cases.find((c) => c.failure)!;
      expect(failed.name).toBe('wrongly expected quiet');
      const json = JSON.parse((await run('test', EXAMPLE_RULE, '--fixtures', fixtures, '--target', 'local', '--format', 'json')).stdout);
      const reason = json.results[0].result.tests.find((t: any) => !t.passed).reason;
      expect(failed.failure!.message).toBe(reason);
      expect(reason.length).toBeGreaterThan(0);
    });

    it('fails with exit 1 and names the file when the service refuses a fixture', async () => {
      const fixtures = path.join(dir, 'invalid.fixtures');
      fs.mkdirSync(fixtures);
      fs.writeFileSync(path.join(fixtures, 'ok.json'), JSON.stringify({ name: 'fine', expect: 'match', event: { Image: 'x' } }));
      fs.writeFileSync(path.join(fixtures, 'typo.json'), JSON.stringify({ name: 'no expectation', event: { Image: 'x' } }));
      const r = await run('test', EXAMPLE_RULE, '--fixtures', fixtures, '--target', 'local');
      expect(r.code).toBe(1);
      expect(r.stdout).toContain(`${EXAMPLE_RULE}: error [fixtures rejected]`);
      expect(r.stdout).toContain(`  ${path.join(fixtures, 'typo.json')}: `);
      expect(r.stdout).not.toContain(`  ${path.join(fixtures, 'ok.json')}: `);
    });

    it('exits 2 without pushing anything when a rule has no fixtures directory', async () => {
      const r = await run('test', 'broken.yml', '--target', 'local');
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('No fixtures directory broken.fixtures');
      expect((await svc.request('GET', '/api/v1/rules/7d0e8a52-6c1b-4f3e-9a27-0b5c4d3e2f10')).status).toBe(404);
    });
  });

  describe('push', () => {
    it('stores a new rule, keeps an unchanged one, with exit 0', async () => {
      const rule = path.join(dir, 'pushed.yml');
      fs.writeFileSync(
        rule,
        BROKEN.replace('Image|endswithh', 'Image|endswith').replace(' and filter', '').replace('7d0e8a52-6c1b-4f3e-9a27-0b5c4d3e2f10', '7d0e8a52-6c1b-4f3e-9a27-0b5c4d3e2f11'),
      );
      const first = await run('push', rule);
      expect(first.code).toBe(0);
      expect(first.stdout).toBe(`stored    ${rule} → 7d0e8a52-6c1b-4f3e-9a27-0b5c4d3e2f11 v1\n`);
      const again = await run('push', rule);
      expect(again.code).toBe(0);
      expect(again.stdout).toBe(`unchanged ${rule} → 7d0e8a52-6c1b-4f3e-9a27-0b5c4d3e2f11 v1\n`);
    });

    it('fails with exit 1 for a file the registry refuses, and still pushes the others', async () => {
      const bad = path.join(dir, 'not-sigma.yml');
      fs.writeFileSync(bad, 'just: a map\n');
      const r = await run('push', bad, EXAMPLE_RULE);
      expect(r.code).toBe(1);
      const lines = r.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(new RegExp(`^failed    ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: POST /rules → 400 `));
      // The service's field errors follow, indented, so the reason is visible in the CI log.
      expect(lines[1]).toBe('  /body/rule: the rule needs an `id` that is a UUID');
      expect(lines.at(-1)).toMatch(/ → 4f1c2a7e-93d5-4b8e-a0c6-2d7e5b9f8a31 v1$/);
    });
  });

  describe('when the service cannot be used', () => {
    it('exits 2 with a clear message when the token is refused', async () => {
      const r = await cli(['lint', EXAMPLE_RULE, '--target', 'local'], { ...env, DETFLOW_TOKEN: 'dfw_not_a_real_token' }, dir);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('→ 401 ');
      expect(r.stderr).toContain('The token in DETFLOW_TOKEN was refused');
      expect(r.stdout).toBe('');
    });

    it('exits 2 when nothing listens at DETFLOW_URL', async () => {
      // A port that was just free: bound, then released.
      const server = http.createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as AddressInfo).port;
      await new Promise<void>((resolve) => server.close(() => resolve()));
      for (const args of [
        ['lint', EXAMPLE_RULE, '--target', 'local'],
        ['push', EXAMPLE_RULE],
        ['test', EXAMPLE_RULE, '--target', 'local'],
      ]) {
        const r = await cli(args, { ...env, DETFLOW_URL: `http://127.0.0.1:${port}` }, dir);
        expect([args[0], r.code]).toEqual([args[0], 2]);
        expect(r.stderr).toContain(`detflow: Cannot reach detflow at http://127.0.0.1:${port}/api/v1: fetch failed (ECONNREFUSED)`);
      }
    });

    it('exits 2 when DETFLOW_URL is not set', async () => {
      const r = await cli(['push', EXAMPLE_RULE], { DETFLOW_TOKEN: svc.token }, dir);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('DETFLOW_URL is not set');
    });
  });
});
