import fs from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { buildProgram } from '../../cli/main';
import type { CompositeAction } from '../support/github-action';

const root = path.join(__dirname, '../..');
const readText = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');
const read = (file: string) => parse(readText(file)) as Record<string, any>;

/** Every `detflow …` command line of a CI file, split into words (quotes removed). */
function detflowCommands(lines: string[]): string[][] {
  return lines
    .flatMap((l) => l.split('\n'))
    .filter((l) => /^\s*detflow /.test(l))
    .map((l) => l.trim().slice('detflow '.length).replace(/"/g, '').split(/\s+/));
}

/** The examples are documentation people copy: they must only use commands and flags the CLI has. */
function expectKnownToCli(words: string[]) {
  const program = buildProgram({ out: () => undefined, err: () => undefined, env: {} }, () => undefined);
  const command = program.commands.find((c) => c.name() === words[0]);
  expect(command?.name()).toBe(words[0]);
  const known = new Set(command!.options.map((o) => o.long));
  for (const flag of words.filter((w) => w.startsWith('--'))) expect([words[0], flag, known.has(flag)]).toEqual([words[0], flag, true]);
}

const action = read('action.yml') as CompositeAction;
const component = parseAllDocuments(readText('templates/detflow.yml')).map((d) => d.toJS() as Record<string, any>);
const componentInputs = component[0]!.spec.inputs as Record<string, { default: unknown }>;

describe('CI examples', () => {
  it('GitHub Actions: every job installs the CLI with the detflow action, which lints, tests, replays and deploys', () => {
    const wf = read('examples/github-actions.yml');
    const steps = (job: string) => wf.jobs[job].steps as Array<Record<string, any>>;
    const actionStep = (job: string) => steps(job).find((s) => /\/detflow@/.test(s.uses ?? ''))!;
    for (const job of Object.keys(wf.jobs)) {
      const uses = actionStep(job);
      expect([job, uses?.with?.url]).toEqual([job, '${{ vars.DETFLOW_URL }}']);
      for (const input of Object.keys(uses.with)) expect([job, input, input in action.inputs]).toEqual([job, input, true]);
      // The CLI is on the PATH only after the action: every command comes after it.
      const first = steps(job).indexOf(uses);
      for (const [i, s] of steps(job).entries()) if (typeof s.run === 'string' && /^\s*detflow /m.test(s.run)) expect(i).toBeGreaterThan(first);
      for (const words of detflowCommands(steps(job).flatMap((s) => (typeof s.run === 'string' ? [s.run] : [])))) expectKnownToCli(words);
    }
    const check = actionStep('check').with;
    expect(check).toMatchObject({ token: '${{ secrets.DETFLOW_TOKEN }}', rules: '${{ env.RULES_DIR }}', test: true, replay: "${{ github.event_name == 'pull_request' }}" });
    // The SARIF report the action writes goes to code scanning, which annotates the pull request.
    const upload = steps('check').find((s) => s.uses?.startsWith('github/codeql-action/upload-sarif@'))!;
    expect(upload.with.sarif_file).toBe(`\${{ steps.${actionStep('check').id}.outputs.lint-report }}`);
    expect(action.inputs['lint-format']!.default).toBe('sarif');
    expect(wf.permissions['security-events']).toBe('write');
    expect(detflowCommands(steps('publish').map((s) => s.run ?? ''))).toEqual([['push', '$RULES_DIR']]);
    // Deploying goes after publishing, and only from the default branch, as publishing does.
    expect(wf.jobs.deploy.needs).toBe('publish');
    expect(wf.jobs.deploy.if).toBe(wf.jobs.publish.if);
    const deploy = actionStep('deploy').with;
    expect(fs.existsSync(path.join(root, deploy.deploy.replace('${{ env.RULES_DIR }}', wf.env.RULES_DIR)))).toBe(true);
    expectKnownToCli(['deploy', ...deploy['deploy-args'].split(' ')]);
    expect(wf.jobs.deploy['timeout-minutes'] * 60).toBeGreaterThan(Number(action.inputs['wait-timeout']!.default));
    expect(fs.existsSync(path.join(root, wf.env.RULES_DIR))).toBe(true);
  });

  it('GitLab CI: includes the detflow component, whose jobs the plan and publish jobs extend', () => {
    const ci = read('examples/gitlab-ci.yml');
    const [include] = ci.include as Array<{ component: string; inputs: Record<string, any> }>;
    expect(include!.component).toMatch(/^\$CI_SERVER_FQDN\/[\w/-]+\/detflow@[\w.-]+$/);
    for (const input of Object.keys(include!.inputs)) expect([input, input in componentInputs]).toEqual([input, true]);
    // The stages the component's jobs run in exist in the pipeline.
    expect(ci.stages).toEqual(expect.arrayContaining([componentInputs.stage!.default, componentInputs['deploy-stage']!.default, 'publish']));
    expect(fs.existsSync(path.join(root, include!.inputs.rules))).toBe(true);
    expect(fs.existsSync(path.join(root, include!.inputs.deploy))).toBe(true);
    expectKnownToCli(['deploy', ...include!.inputs['deploy-args'].split(' ')]);
    // GitLab's default job timeout is 60 minutes; the deploy job's must outlast the CLI's wait (NaN otherwise, which fails).
    expect(Number(/^(\d+)m$/.exec(include!.inputs['deploy-timeout'])?.[1] ?? NaN) * 60).toBeGreaterThan(Number(componentInputs['wait-timeout']!.default));
    for (const job of ['plan', 'publish']) {
      expect(ci[job].extends).toBe('.detflow-cli');
      for (const words of detflowCommands(ci[job].script)) expectKnownToCli(words);
    }
    expect(detflowCommands(ci.publish.script)).toEqual([['push', '$DETFLOW_RULES']]);
    expect(ci.publish.rules).toEqual([{ if: '$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH' }]);
  });

  it('gives every example rule a fixtures directory, as `detflow test <dir>` expects', () => {
    const dir = path.join(root, 'examples/rules');
    const rules = fs.readdirSync(dir).filter((f) => f.endsWith('.yml'));
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) expect(fs.readdirSync(path.join(dir, rule.replace(/\.yml$/, '.fixtures'))).filter((f) => f.endsWith('.json')).length).toBeGreaterThan(0);
  });
});
