import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { buildProgram } from '../../cli/main';

const root = path.join(__dirname, '../..');
const read = (file: string) => parse(fs.readFileSync(path.join(root, file), 'utf8')) as Record<string, any>;

/** Every `npx detflow …` command line of a CI file, split into words (quotes removed). */
function detflowCommands(lines: string[]): string[][] {
  return lines
    .filter((l) => l.includes('npx detflow '))
    .map((l) =>
      l
        .slice(l.indexOf('npx detflow ') + 'npx detflow '.length)
        .replace(/"/g, '')
        .split(/\s+/),
    );
}

/** The examples are documentation people copy: they must only use commands and flags the CLI has. */
function expectKnownToCli(words: string[]) {
  const program = buildProgram({ out: () => undefined, err: () => undefined, env: {} }, () => undefined);
  const command = program.commands.find((c) => c.name() === words[0]);
  expect(command?.name()).toBe(words[0]);
  const known = new Set(command!.options.map((o) => o.long));
  for (const flag of words.filter((w) => w.startsWith('--'))) expect([words[0], flag, known.has(flag)]).toEqual([words[0], flag, true]);
}

/** The value after `--output`: the report file the CI system must pick up. */
const outputOf = (words: string[]) => words[words.indexOf('--output') + 1];

/** The deploy step both examples run on the default branch: one rule, through a reviewer, waiting until it is live. */
const DEPLOY_AND_WAIT = ['deploy', '$RULES_DIR/schtasks_temp_payload.yml', '--target', 'local', '--approval', '--budget', '50', '--wait'];

/** How long `deploy --wait` waits by default: a CI job must allow longer, or it is killed before the CLI can say why it stopped. */
function defaultWaitSeconds(): number {
  const program = buildProgram({ out: () => undefined, err: () => undefined, env: {} }, () => undefined);
  const timeout = program.commands.find((c) => c.name() === 'deploy')!.options.find((o) => o.long === '--timeout')!;
  return timeout.defaultValue as number;
}

/** The rule file a deploy command names, as a path in this repository. */
const deployedFile = (words: string[], rulesDir: string) => path.join(root, words[1]!.replace('$RULES_DIR', rulesDir));

describe('CI examples', () => {
  it('GitHub Actions: lints offline, tests against the service, publishes both JUnit reports, pushes and deploys from the default branch', () => {
    const wf = read('examples/github-actions.yml');
    const steps = (job: string) => wf.jobs[job].steps as Array<Record<string, any>>;
    const runs = (job: string) => detflowCommands(steps(job).flatMap((s) => (typeof s.run === 'string' ? [s.run] : [])));
    const reports = (job: string) =>
      steps(job)
        .filter((s) => s.uses?.startsWith('mikepenz/action-junit-report@'))
        .map((s) => s.with.report_paths);

    const [lint] = runs('lint');
    expect(lint!.slice(0, 2)).toEqual(['lint', '--offline']);
    expect(reports('lint')).toEqual([outputOf(lint!)]);
    const [test] = runs('test');
    expect(test![0]).toBe('test');
    expect(reports('test')).toEqual([outputOf(test!)]);
    expect(wf.jobs.test.env).toEqual({ DETFLOW_URL: '${{ vars.DETFLOW_URL }}', DETFLOW_TOKEN: '${{ secrets.DETFLOW_TOKEN }}' });
    expect(runs('publish')).toEqual([['push', '$RULES_DIR']]);
    expect(wf.jobs.publish.needs).toBe('test');
    // Deploying goes after publishing, and only from the default branch, as publishing does.
    expect(runs('deploy')).toEqual([DEPLOY_AND_WAIT]);
    expect(wf.jobs.deploy.needs).toBe('publish');
    expect(wf.jobs.deploy.if).toBe(wf.jobs.publish.if);
    expect(wf.jobs.deploy.env).toEqual(wf.jobs.test.env);
    expect(wf.jobs.deploy['timeout-minutes'] * 60).toBeGreaterThan(defaultWaitSeconds());
    expect(fs.existsSync(deployedFile(runs('deploy')[0]!, wf.env.RULES_DIR))).toBe(true);
    for (const job of ['lint', 'test', 'publish', 'deploy']) for (const words of runs(job)) expectKnownToCli(words);
    expect(fs.existsSync(path.join(root, wf.env.RULES_DIR))).toBe(true);
  });

  it('GitLab CI: the same stages, with artifacts:reports:junit naming the files the CLI writes, and the deploy stage', () => {
    const ci = read('examples/gitlab-ci.yml');
    expect(ci.stages).toEqual(['lint', 'test', 'publish', 'deploy']);
    for (const job of ['lint', 'test']) {
      const [words] = detflowCommands(ci[job].script);
      expect(words![0]).toBe(job);
      expect(ci[job].artifacts).toEqual({ when: 'always', reports: { junit: outputOf(words!) } });
      expectKnownToCli(words!);
    }
    expect(detflowCommands(ci.lint.script)[0]).toContain('--offline');
    expect(detflowCommands(ci.publish.script)).toEqual([['push', '$RULES_DIR']]);
    expect(ci.publish.rules).toEqual([{ if: '$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH' }]);
    expect(detflowCommands(ci.deploy.script)).toEqual([DEPLOY_AND_WAIT]);
    expectKnownToCli(DEPLOY_AND_WAIT);
    expect(ci.deploy.rules).toEqual(ci.publish.rules);
    expect(ci.deploy.stage).toBe('deploy');
    // GitLab's default job timeout is 60 minutes; the example states its own in minutes (NaN otherwise, which fails).
    expect(Number(/^(\d+)m$/.exec(ci.deploy.timeout)?.[1] ?? NaN) * 60).toBeGreaterThan(defaultWaitSeconds());
    expect(fs.existsSync(deployedFile(DEPLOY_AND_WAIT, ci.variables.RULES_DIR))).toBe(true);
    expect(fs.existsSync(path.join(root, ci.variables.RULES_DIR))).toBe(true);
  });

  it('gives every example rule a fixtures directory, as `detflow test <dir>` expects', () => {
    const dir = path.join(root, 'examples/rules');
    const rules = fs.readdirSync(dir).filter((f) => f.endsWith('.yml'));
    expect(rules.length).toBeGreaterThan(0);
    for (const rule of rules) expect(fs.readdirSync(path.join(dir, rule.replace(/\.yml$/, '.fixtures'))).filter((f) => f.endsWith('.json')).length).toBeGreaterThan(0);
  });
});
