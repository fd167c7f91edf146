import fs from 'node:fs';
import path from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import type { CompositeAction } from '../support/github-action';

// The GitHub Action (action.yml) and the GitLab CI/CD component (templates/detflow.yml) are what a
// pipeline runs: every input they declare must do something, every input they use must be declared,
// and their outputs must come from steps that write them. test/integration/ci-action.test.ts runs the
// action's steps against a real service.

const root = path.join(__dirname, '../..');
const read = (file: string) => fs.readFileSync(path.join(root, file), 'utf8');

/** Names used as `<prefix>.<name>` in `${{ }}` expressions or `if:` conditions of `text`. */
const contextNames = (text: string, prefix: string) => new Set([...text.matchAll(new RegExp(`\\b${prefix}\\.([\\w-]+)`, 'g'))].map((m) => m[1]!));

describe('the GitHub Action (action.yml)', () => {
  const text = read('action.yml');
  const action = parse(text) as CompositeAction & { name: string; description: string };
  const steps = action.runs.steps;

  it('is a composite action whose inputs and outputs are all described', () => {
    expect(action.runs.using).toBe('composite');
    expect(action.name).toBe('detflow');
    for (const [name, input] of Object.entries(action.inputs)) expect([name, typeof input.description, input.description.length > 10]).toEqual([name, 'string', true]);
    for (const [name, output] of Object.entries(action.outputs)) expect([name, typeof output.description]).toEqual([name, 'string']);
    // Only url is required: a pipeline that lints needs nothing else.
    expect(
      Object.entries(action.inputs)
        .filter(([, i]) => i.required)
        .map(([n]) => n),
    ).toEqual(['url']);
    expect(Object.keys(action.inputs)).toEqual(expect.arrayContaining(['lint', 'test', 'replay', 'deploy', 'wait']));
  });

  it('uses every input it declares and declares every input it uses', () => {
    const runs = steps.map((s) => JSON.stringify({ if: s.if, env: s.env, run: s.run }));
    const used = contextNames(runs.join('\n'), 'inputs');
    expect([...used].sort()).toEqual(Object.keys(action.inputs).sort());
  });

  it('passes inputs to the scripts through the environment, never spliced into a script', () => {
    for (const step of steps) expect([step.id ?? step.name, /\$\{\{/.test(step.run ?? '')]).toEqual([step.id ?? step.name, false]);
    for (const step of steps) expect([step.id ?? step.name, step.shell]).toEqual([step.id ?? step.name, 'bash']);
  });

  it('maps each output to a step that writes it to GITHUB_OUTPUT', () => {
    for (const [name, output] of Object.entries(action.outputs)) {
      const m = /^\$\{\{ steps\.([\w-]+)\.outputs\.([\w-]+) \}\}$/.exec(output.value);
      expect([name, m !== null]).toEqual([name, true]);
      const step = steps.find((s) => s.id === m![1]);
      expect([name, step?.id]).toEqual([name, m![1]]);
      expect([name, step!.run!.includes(`echo "${m![2]}=`) && step!.run!.includes('>> "$GITHUB_OUTPUT"')]).toEqual([name, true]);
    }
    // Steps read other steps' outputs only from steps that come before them.
    for (const [index, step] of steps.entries())
      for (const id of contextNames(JSON.stringify(step.env ?? {}), 'steps')) expect(steps.slice(0, index).some((s) => s.id === id)).toBe(true);
  });

  it('installs the CLI from the service first, and switches each later step by an input', () => {
    expect(steps[0]!.id).toBe('install');
    expect(steps[0]!.run).toContain('npm install -g --no-audit --no-fund "${DETFLOW_URL%/}/cli/detflow.tgz"');
    expect(steps[0]!.if).toBeUndefined();
    for (const step of steps.slice(1)) expect([step.id ?? step.name, /\binputs\.[\w-]+\s*[!=]=/.test(step.if ?? '')]).toEqual([step.id ?? step.name, true]);
    const command = (id: string) =>
      /detflow (\w+)/.exec(
        steps
          .find((s) => s.id === id)!
          .run!.split('\n')
          .filter((l) => l.includes('detflow '))
          .at(-1)!,
      )![1];
    expect(['lint', 'test', 'replay', 'deploy'].map(command)).toEqual(['lint', 'test', 'replay', 'deploy']);
  });
});

describe('the GitLab CI/CD component (templates/detflow.yml)', () => {
  const text = read('templates/detflow.yml');
  const [header, body] = parseAllDocuments(text).map((d) => d.toJS() as Record<string, any>);
  const jobs = body!;

  it('has the component layout: a spec of described inputs, then the jobs', () => {
    expect(Object.keys(header!)).toEqual(['spec']);
    const inputs = header!.spec.inputs as Record<string, { description: string; default?: unknown; type?: string }>;
    for (const [name, input] of Object.entries(inputs)) expect([name, typeof input.description, 'default' in input]).toEqual([name, 'string', true]);
    for (const [name, input] of Object.entries(inputs)) if (input.type === 'boolean') expect([name, typeof input.default]).toEqual([name, 'boolean']);
    expect(Object.keys(jobs).sort()).toEqual(['.detflow-cli', 'detflow-deploy', 'detflow-lint', 'detflow-replay', 'detflow-test']);
  });

  it('uses every input it declares, and only those', () => {
    const body = text.slice(text.indexOf('\n---\n'));
    const used = new Set([...body.matchAll(/\$\[\[\s*inputs\.([\w-]+)\s*\]\]/g)].map((m) => m[1]!));
    expect([...used].sort()).toEqual(Object.keys(header!.spec.inputs as object).sort());
  });

  it('installs the CLI from the service before every job, and switches each job by a variable it sets from an input', () => {
    expect(jobs['.detflow-cli'].before_script[0]).toBe('npm install -g --no-audit --no-fund "${DETFLOW_URL%/}/cli/detflow.tgz"');
    for (const name of ['detflow-lint', 'detflow-test', 'detflow-replay', 'detflow-deploy']) {
      const job = jobs[name];
      expect([name, job.extends]).toEqual([name, '.detflow-cli']);
      const switched = /^\$(\w+) (?:==|!=) "/.exec(job.rules[0].if)?.[1];
      expect([name, switched !== undefined && switched in job.variables]).toEqual([name, true]);
      // Every variable a script reads is the job's own, the CLI's (URL, token) or GitLab's.
      const read = new Set([...(job.script as string[]).join('\n').matchAll(/\$\{?(\w+)/g)].map((m) => m[1]!));
      const own = new Set([...Object.keys(job.variables), ...Object.keys(jobs['.detflow-cli'].variables)]);
      for (const v of read) expect([name, v, own.has(v) || /^(?:DETFLOW_(?:URL|TOKEN|GITLAB_TOKEN)|CI_\w+)$/.test(v)]).toEqual([name, v, true]);
    }
    expect(jobs['detflow-deploy'].rules[0].if).toContain('$CI_COMMIT_BRANCH == $CI_DEFAULT_BRANCH');
    expect(jobs['detflow-deploy'].script[0]).toContain('--wait --timeout "$DETFLOW_WAIT_TIMEOUT"');
  });
});
