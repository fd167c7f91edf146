import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Just enough of the GitHub Actions runner to run a composite action's `run:` steps on this machine:
 * `${{ }}` expressions that name a context value (inputs.x, github.x, steps.x.outputs.y, env.x),
 * `if:` conditions made of such values compared (== / !=) with string literals and joined by &&, the
 * GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files, and bash as the runner starts it. Anything else in an
 * expression throws, so an action that needs more fails its test rather than running wrongly.
 */

export type ActionStep = { id?: string; name?: string; if?: string; shell?: string; env?: Record<string, string>; run?: string; uses?: string };
export type CompositeAction = {
  inputs: Record<string, { description: string; required?: boolean; default?: string }>;
  outputs: Record<string, { description: string; value: string }>;
  runs: { using: string; steps: ActionStep[] };
};

export type Contexts = {
  inputs: Record<string, string>;
  github: Record<string, unknown>;
  env: Record<string, string>;
  steps: Record<string, { outputs: Record<string, string> }>;
};

function lookup(ref: string, ctx: Contexts): string {
  if (!/^[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*$/.test(ref)) throw new Error(`unsupported expression: ${ref}`);
  let value: unknown = ctx;
  for (const part of ref.split('.')) value = value === undefined || value === null ? undefined : (value as Record<string, unknown>)[part];
  // GitHub gives an empty string for a property that does not exist.
  return value === undefined || value === null ? '' : String(value);
}

function operand(text: string, ctx: Contexts): string {
  const t = text.trim();
  const literal = /^'((?:[^']|'')*)'$/.exec(t);
  return literal ? literal[1]!.replace(/''/g, "'") : lookup(t, ctx);
}

/** The value of an expression: a context value, or a condition (`a == 'b' && c != ''`) as 'true' / 'false'. */
export function evaluate(expression: string, ctx: Contexts): string {
  const terms = expression.split('&&');
  if (terms.length === 1 && !/[=!]=/.test(expression)) return operand(expression, ctx);
  return String(
    terms.every((term) => {
      const m = /^(.*?)(==|!=)(.*)$/.exec(term);
      if (!m) throw new Error(`unsupported condition: ${term}`);
      const equal = operand(m[1]!, ctx) === operand(m[3]!, ctx);
      return m[2] === '==' ? equal : !equal;
    }),
  );
}

/** `text` with each `${{ expression }}` replaced by its value. */
export function substitute(text: string, ctx: Contexts): string {
  return text.replace(/\$\{\{(.*?)\}\}/g, (_, expression: string) => evaluate(expression, ctx));
}

/** A step's `if:`, which GitHub reads as an expression with or without `${{ }}`. */
function shouldRun(step: ActionStep, ctx: Contexts): boolean {
  if (step.if === undefined) return true;
  const bare = /^\$\{\{(.*)\}\}$/s.exec(step.if.trim());
  return evaluate(bare ? bare[1]! : step.if, ctx) === 'true';
}

/** key=value lines, and key<<DELIMITER … DELIMITER blocks, as the runner reads GITHUB_OUTPUT. */
export function readOutputFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const heredoc = /^([\w-]+)<<(.+)$/.exec(line);
    if (heredoc) {
      const end = lines.indexOf(heredoc[2]!, i + 1);
      out[heredoc[1]!] = lines.slice(i + 1, end).join('\n');
      i = end;
    } else if (line.includes('=')) out[line.slice(0, line.indexOf('='))] = line.slice(line.indexOf('=') + 1);
  }
  return out;
}

function runBash(script: string, options: { cwd: string; env: Record<string, string>; timeoutMs: number }): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['--noprofile', '--norc', '-eo', 'pipefail', script], { cwd: options.cwd, env: options.env });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
    const killer = setTimeout(() => child.kill(), options.timeoutMs);
    child.on('error', (err) => (stderr += String(err)));
    child.on('close', (code) => {
      clearTimeout(killer);
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

export type StepRun = { id: string | undefined; name: string | undefined; ran: boolean; code: number; stdout: string; stderr: string; outputs: Record<string, string> };
export type ActionRun = { steps: StepRun[]; outputs: Record<string, string>; summary: string; failed: boolean };

/**
 * Runs the action's steps in `workspace` as a job would, with `inputs` over the declared defaults,
 * until one fails; `env` is the job's environment (PATH and the like).
 */
export async function runCompositeAction(
  action: CompositeAction,
  options: { inputs: Record<string, string>; github?: Record<string, unknown>; env: Record<string, string>; workspace: string; scratch: string; timeoutMs?: number },
): Promise<ActionRun> {
  expect(action.runs.using).toBe('composite');
  const ctx: Contexts = { inputs: {}, github: { event_name: 'push', ...options.github }, env: options.env, steps: {} };
  for (const [name, input] of Object.entries(action.inputs)) ctx.inputs[name] = substitute(input.default ?? '', ctx);
  for (const name of Object.keys(options.inputs)) if (!(name in action.inputs)) throw new Error(`the action has no input ${name}`);
  Object.assign(ctx.inputs, options.inputs);
  const summaryFile = path.join(options.scratch, 'step-summary.md');
  fs.writeFileSync(summaryFile, '');
  const steps: StepRun[] = [];
  let failed = false;
  for (const [index, step] of action.runs.steps.entries()) {
    if (failed || !shouldRun(step, ctx)) {
      steps.push({ id: step.id, name: step.name, ran: false, code: 0, stdout: '', stderr: '', outputs: {} });
      continue;
    }
    if (step.run === undefined) throw new Error(`step ${step.id ?? index} is not a run step`);
    expect(step.shell).toBe('bash');
    const outputFile = path.join(options.scratch, `output-${index}`);
    fs.writeFileSync(outputFile, '');
    const script = path.join(options.scratch, `step-${index}.sh`);
    fs.writeFileSync(script, substitute(step.run, ctx));
    const stepEnv = Object.fromEntries(Object.entries(step.env ?? {}).map(([k, v]) => [k, substitute(String(v), ctx)]));
    // How the runner starts `shell: bash`; asynchronously, since the service the step talks to may run in this process.
    const res = await runBash(script, {
      cwd: options.workspace,
      timeoutMs: options.timeoutMs ?? 60_000,
      env: { ...options.env, ...stepEnv, GITHUB_OUTPUT: outputFile, GITHUB_STEP_SUMMARY: summaryFile, GITHUB_WORKSPACE: options.workspace },
    });
    const outputs = readOutputFile(fs.readFileSync(outputFile, 'utf8'));
    if (step.id) ctx.steps[step.id] = { outputs };
    const { code } = res;
    steps.push({ id: step.id, name: step.name, ran: true, code, stdout: res.stdout, stderr: res.stderr, outputs });
    failed = code !== 0;
  }
  const outputs = Object.fromEntries(Object.entries(action.outputs).map(([name, o]) => [name, substitute(o.value, ctx)]));
  return { steps, outputs, summary: fs.readFileSync(summaryFile, 'utf8'), failed };
}
