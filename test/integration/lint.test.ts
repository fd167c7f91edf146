import { createTenant, startTestService, type TestService } from '../support/harness';

const GOOD = `title: Encoded PowerShell
id: 1b2c3d4e-5f60-4a7b-8c9d-0e1f2a3b4c5d
status: test
description: Detects powershell started with an encoded command
author: detflow tests
date: 2026-11-01
level: high
tags:
  - attack.execution
  - attack.t1059.001
logsource:
  category: process_creation
  product: windows
detection:
  selection:
    Image|endswith: '\\powershell.exe'
    CommandLine|contains|windash: ' -enc '
  condition: selection
falsepositives:
  - Admin scripts
`;

const BROKEN = `title: Broken
id: not-a-uuid
logsource:
  product: windows
detection:
  selection:
    Image|endswithh: 'x.exe'
  condition: selection and filter
`;

const CATASTROPHIC = GOOD.replace("CommandLine|contains|windash: ' -enc '", () => "CommandLine|re: '(a+)+$'");
const KEYWORDS = GOOD.replace(/detection:[\s\S]*?condition: selection/, "detection:\n  keywords:\n    - 'mimikatz'\n  condition: keywords");

describe('POST /rules/lint', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
    const splunk = await svc.request('POST', '/api/v1/settings/targets', {
      body: {
        name: 'splunk-prod',
        kind: 'splunk',
        environment: 'prod',
        connection: { management_url: 'https://splunk.example:8089', token: 'very-secret' },
        cost_model: { currency: 'USD', price_per_gb_scanned: 0.5, triage_minutes_per_alert: 10, cost_per_analyst_hour: 90 },
      },
    });
    expect(splunk.status).toBe(201);
    expect(splunk.body.connection.token).toBe('********');
    expect(splunk.text).not.toContain('very-secret');
  });
  afterAll(() => svc.close());

  const lint = (rule: string, target = 'local', token?: string) => svc.request('POST', '/api/v1/rules/lint', { body: { rule, target }, ...(token ? { token } : {}) });

  it('passes a good rule with capability flags, portability and the compiled query', async () => {
    const res = await lint(GOOD);
    expect(res.status).toBe(200);
    expect(res.body.valid).toBe(true);
    expect(res.body.counts.error).toBe(0);
    expect(res.body.capabilities).toMatchObject({ windash: true, regex: false, keywords: false });
    expect(res.body.portability_score).toBeGreaterThan(0);
    expect(res.body.portability.local).toEqual({ expressible: true, reasons: [] });
    expect(res.body.target).toEqual({ name: 'local', kind: 'local' });
    expect(res.body.query).toMatch(/^SELECT \* FROM events WHERE /);
    expect(res.body.query).toMatch(/ILIKE '%\\\\powershell\.exe'/);
  });

  it('compiles for a Splunk target with its field mapping', async () => {
    const res = await lint(GOOD, 'splunk-prod');
    expect(res.status).toBe(200);
    expect(res.body.target.kind).toBe('splunk');
    expect(res.body.query).toContain('process_path=');
  });

  it('answers 200 with positioned error findings for a broken rule', async () => {
    const res = await lint(BROKEN);
    expect(res.status).toBe(200);
    expect(res.body.valid).toBe(false);
    const byCode = new Map(res.body.findings.map((f: { code: string }) => [f.code, f]));
    expect([...byCode.keys()]).toEqual(expect.arrayContaining(['modifier-unknown']));
    const unknownModifier: any = byCode.get('modifier-unknown');
    expect(unknownModifier).toMatchObject({ severity: 'error', line: 7 });
    expect(res.body.findings.some((f: { message: string }) => /filter/.test(f.message))).toBe(true);
    expect(res.body.findings.some((f: { severity: string; message: string }) => f.severity !== 'info' && /uuid|UUID|id/.test(f.message))).toBe(true);
  });

  it('flags a regex that can backtrack catastrophically', async () => {
    const res = await lint(CATASTROPHIC);
    expect(res.status).toBe(200);
    expect(res.body.valid).toBe(false);
    expect(res.body.findings).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'regex_catastrophic_backtracking', severity: 'error', line: 17 })]));
  });

  it('reports what a target cannot express, and an unportable rule', async () => {
    const res = await lint(KEYWORDS, 'splunk-prod');
    expect(res.status).toBe(200);
    expect(res.body.capabilities.keywords).toBe(true);
    expect(res.body.portability_score).toBeLessThan(1);
    const unportable = Object.entries(res.body.portability).filter(([, p]: [string, any]) => !p.expressible);
    expect(unportable.length).toBeGreaterThan(0);
    for (const [, p] of unportable as Array<[string, any]>) expect(p.reasons.length).toBeGreaterThan(0);
  });

  it('survives hostile input: deep nesting, alias bombs, a 1 MB rule', async () => {
    const deepBlocks = 'title: x\ndetection:\n' + Array.from({ length: 1200 }, (_, i) => ' '.repeat(i + 1) + 'a:').join('\n') + ' 1\n';
    const deepFlow = 'title: x\ndetection:\n  sel: ' + '['.repeat(50000) + ']'.repeat(50000) + '\n  condition: sel\n';
    for (const deep of [deepBlocks, deepFlow]) {
      const deepRes = await lint(deep);
      expect(deepRes.status).toBe(200);
      expect(deepRes.body.valid).toBe(false);
      expect(deepRes.body.counts.error).toBeGreaterThan(0);
    }

    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      ...Array.from({ length: 9 }, (_, i) => {
        const p = String.fromCharCode(97 + i),
          c = String.fromCharCode(98 + i);
        return `${c}: &${c} [${Array(9)
          .fill('*' + p)
          .join(',')}]`;
      }),
    ].join('\n');
    const bombRes = await lint('title: x\n' + bomb);
    expect(bombRes.status).toBe(200);
    expect(bombRes.body.valid).toBe(false);

    const huge = GOOD.replace(
      "CommandLine|contains|windash: ' -enc '",
      'CommandLine|contains:\n' + Array.from({ length: 30000 }, (_, i) => `      - 'value-number-${i}-padding'`).join('\n'),
    );
    expect(Buffer.byteLength(huge)).toBeGreaterThan(1_000_000);
    const hugeRes = await lint(huge);
    // Over the enterprise tier's 1 MiB rule size.
    expect(hugeRes.status).toBe(403);
    expect(hugeRes.body.type).toBe('https://detflow.dev/problems/resource-limit');
    const bigButAllowed = GOOD.replace(
      "CommandLine|contains|windash: ' -enc '",
      'CommandLine|contains:\n' + Array.from({ length: 20000 }, (_, i) => `      - 'value-number-${i}-padding'`).join('\n'),
    );
    const bigRes = await lint(bigButAllowed);
    expect(bigRes.status).toBe(200);
    expect(bigRes.body.findings.some((f: { severity: string; message: string }) => f.severity === 'warning' && /values|list/i.test(f.message))).toBe(true);
  });

  it('applies the rule size of the tenant tier', async () => {
    const free = await createTenant(svc, 'lint-free', 'free');
    const res = await lint(GOOD + '#'.repeat(70 * 1024), 'local', free);
    expect(res.status).toBe(403);
    expect(res.body.detail).toMatch(/free tier allows rules up to 65536 bytes/);
  });

  it('answers 400 for a malformed request and 404 for an unknown target', async () => {
    expect((await svc.request('POST', '/api/v1/rules/lint', { body: { rule: GOOD } })).status).toBe(400);
    expect((await svc.request('POST', '/api/v1/rules/lint', { body: { rule: 42, target: 'local' } })).status).toBe(400);
    expect((await lint(GOOD, 'nowhere')).status).toBe(404);
  });
});
