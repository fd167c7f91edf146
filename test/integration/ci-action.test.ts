import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { startTestService, type TestService } from '../support/harness';
import { runCompositeAction, type CompositeAction } from '../support/github-action';

// The GitHub Action's own scripts, run as a runner would (test/support/github-action.ts) against the
// real service: the CLI is installed from GET /cli/detflow.tgz, then the rules are linted and tested.

const root = path.join(__dirname, '../..');
const action = parse(fs.readFileSync(path.join(root, 'action.yml'), 'utf8')) as CompositeAction;
const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
const EXAMPLES = path.join(root, 'examples/rules');

describe('the detflow GitHub Action', () => {
  let svc: TestService;
  let dir: string;
  let workspace: string;
  /** npm's global prefix of the "runner": `npm install -g` installs there, and its bin is on the PATH. */
  let prefix: string;
  let env: Record<string, string>;
  beforeAll(async () => {
    svc = await startTestService();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'detflow-action-'));
    workspace = path.join(dir, 'repo');
    prefix = path.join(dir, 'npm-global');
    fs.cpSync(EXAMPLES, path.join(workspace, 'rules'), { recursive: true });
    env = {
      PATH: `${path.join(prefix, 'bin')}:${process.env.PATH}`,
      HOME: dir,
      npm_config_prefix: prefix,
      npm_config_cache: path.join(dir, 'npm-cache'),
      NODE_OPTIONS: '',
    };
  }, 120_000);
  afterAll(async () => {
    await svc.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const run = (inputs: Record<string, string>) =>
    runCompositeAction(action, {
      inputs: { url: svc.url, rules: 'rules', ...inputs },
      env,
      workspace,
      scratch: dir,
    });

  it('installs the CLI from the service, lints (SARIF), tests and replays the rules, and summarizes them in the job summary', async () => {
    expect(fs.existsSync(path.join(prefix, 'bin/detflow'))).toBe(false);
    // Deploying without waiting: a reviewer's decision is not part of this test.
    const result = await run({ token: svc.token, test: 'true', replay: 'true', deploy: 'rules/schtasks_temp_payload.yml', wait: 'false' });
    const ran = result.steps.filter((s) => s.ran);
    expect(ran.map((s) => [s.id, s.code, s.code === 0 ? '' : s.stdout + s.stderr])).toEqual([
      ['install', 0, ''],
      ['lint', 0, ''],
      ['test', 0, ''],
      ['replay', 0, ''],
      ['deploy', 0, ''],
    ]);
    expect(result.failed).toBe(false);
    expect(ran[0]!.stdout).toContain(`detflow ${version} from ${svc.url}`);
    // Installed globally, from the tarball the service serves: the same bundle, byte for byte.
    const installed = path.join(prefix, 'lib/node_modules/detflow');
    expect(JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8'))).toMatchObject({ name: 'detflow', version });
    const served = path.join(dir, 'served.tgz');
    fs.writeFileSync(served, Buffer.from(await (await fetch(`${svc.url}/cli/detflow.tgz`)).arrayBuffer()));
    expect(execFileSync('tar', ['xzOf', served, 'package/bin/detflow.js']).equals(fs.readFileSync(path.join(installed, 'bin/detflow.js')))).toBe(true);
    expect(result.outputs).toEqual({
      'cli-version': version,
      'lint-report': 'detflow-reports/lint.sarif',
      'test-report': 'detflow-reports/test.xml',
      'replay-summary': 'detflow-reports/replay.md',
      'deploy-exit-code': '0',
    });
    expect(ran[4]!.stdout).toContain('schtasks_temp_payload');
    // SARIF for code scanning, by default; the rule's file named relative to the workspace.
    const sarif = JSON.parse(fs.readFileSync(path.join(workspace, result.outputs['lint-report']!), 'utf8'));
    expect(sarif.version).toBe('2.1.0');
    expect(sarif.runs[0].tool.driver.name).toBe('detflow');
    expect(fs.readFileSync(path.join(workspace, result.outputs['test-report']!), 'utf8')).toMatch(/<testcase /);
    // The replay's projection, in the file the PR comment posts and in the job summary with lint's and test's.
    const replay = fs.readFileSync(path.join(workspace, result.outputs['replay-summary']!), 'utf8');
    expect(replay).toMatch(/alerts\/day/i);
    expect(replay).toContain('schtasks');
    expect(result.summary).toContain(replay.trim());
    expect(result.summary.split(/^#+ /m).length).toBeGreaterThanOrEqual(4);
    // Not a pull request here: the comment step did not run.
    expect(result.steps.filter((s) => !s.ran).map((s) => s.id ?? s.name)).toEqual(['Comment the replay summary on the pull request']);
  });

  it('fails at the lint step on a broken rule, and runs nothing after it', async () => {
    const rule = fs.readFileSync(path.join(EXAMPLES, 'schtasks_temp_payload.yml'), 'utf8');
    fs.writeFileSync(
      path.join(workspace, 'rules/broken.yml'),
      rule.replace(/condition: .*/, 'condition: selection and missing').replace(/^id: .*/m, 'id: 5b1c2a7e-93d5-4b8e-a0c6-2d7e5b9f8a32'),
    );
    try {
      const result = await run({ token: svc.token, test: 'true', 'lint-format': 'junit', 'job-summary': 'false' });
      expect(result.steps.filter((s) => s.ran).map((s) => [s.id, s.code])).toEqual([
        ['install', 0],
        ['lint', 1],
      ]);
      expect(result.failed).toBe(true);
      expect(result.steps.find((s) => s.id === 'lint')!.stdout).toMatch(/1 file failed/);
    } finally {
      fs.rmSync(path.join(workspace, 'rules/broken.yml'));
    }
  });

  it('reports the exit code of a deploy the service refuses, and fails', async () => {
    const result = await run({ token: svc.token, lint: 'false', deploy: 'rules/schtasks_temp_payload.yml', target: 'no-such-target', wait: 'false' });
    expect(result.steps.filter((s) => s.ran).map((s) => [s.id, s.code])).toEqual([
      ['install', 0],
      ['deploy', 2],
    ]);
    expect([result.failed, result.outputs['deploy-exit-code']]).toEqual([true, '2']);
  });
});
