import os from 'node:os';
import { spawn } from 'node:child_process';
import { ensurePythonTool } from '../support/python-tools';
import { startTestService, type TestService } from '../support/harness';

const SCHEMATHESIS = 'schemathesis==4.32.5';

/**
 * Property-based contract testing of the live service against its own openapi.json: no 5xx, and
 * every answer (errors included) has a documented status, content type, headers and body shape.
 */
describe('the live API conforms to its OpenAPI document (Schemathesis)', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  }, 120_000);
  afterAll(() => svc.close());

  it('finds no server error and no answer that breaks the document', async () => {
    const st = ensurePythonTool('schemathesis', [SCHEMATHESIS], 'st');
    const args = [
      'run',
      `${svc.url}/api/v1/openapi.json`,
      '--url',
      `${svc.url}/api/v1`,
      '-H',
      `Authorization: Bearer ${svc.token}`,
      '--checks',
      'all',
      // Schema-valid is not always acceptable: a rule must be a Sigma YAML document, environments
      // must exist, cursors must be ones we issued, expiries must be in the future. Those answer
      // 400 with pointers by design, which this heuristic check would count as failures.
      '--exclude-checks',
      'positive_data_acceptance',
      // Revoking keys would revoke the very token the run authenticates with.
      '--exclude-operation-id',
      'revokeApiKey',
      '--max-examples',
      '25',
      '--seed',
      '20261125',
      '--no-color',
    ];
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      const child = spawn(st.bin, args, { env: { ...st.env, SCHEMATHESIS_HOOKS: '' }, cwd: os.tmpdir() });
      let out = '';
      child.stdout.on('data', (d) => (out += String(d)));
      child.stderr.on('data', (d) => (out += String(d)));
      child.on('close', (c) => resolve({ code: c, output: out }));
    });
    if (code !== 0) process.stderr.write(output);
    expect(Number(/Tested: (\d+)/.exec(output)?.[1])).toBeGreaterThanOrEqual(20);
    expect(output).not.toMatch(/ST101|Server error/);
    expect(code).toBe(0);
  }, 300_000);
});
