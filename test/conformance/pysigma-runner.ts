import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ensurePythonTool } from '../support/python-tools';

/**
 * pySigma, the Sigma reference implementation, installed from PyPI into .tools/pysigma on first use
 * (pinned, transitive dependencies included, in tools/pysigma/requirements.txt) and driven through
 * tools/pysigma/convert.py. Shared by the conformance test and bench/sigma.ts.
 */
const TOOL_DIR = path.resolve(__dirname, '../../tools/pysigma');
export const CONVERT_SCRIPT = path.join(TOOL_DIR, 'convert.py');

export function pySigmaRequirements(): string[] {
  return readFileSync(path.join(TOOL_DIR, 'requirements.txt'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
}

export interface PyQueries {
  readonly queries?: string[];
  readonly error?: string;
}

export interface PyRuleResult {
  readonly path: string;
  /** Set when pySigma cannot load the rule at all. */
  readonly error?: string;
  readonly sql?: PyQueries;
  readonly splunk?: PyQueries;
  readonly esql?: PyQueries;
  readonly kql?: PyQueries;
  /** Indexes of the events pySigma's SQLite query selected. */
  readonly verdicts?: number[];
  readonly sql_runtime_error?: string;
}

export interface PyBench {
  readonly rules: number;
  readonly parsed: number;
  readonly backends: string[];
  readonly seconds: number;
  readonly rules_per_second: number;
  readonly converted: number;
  readonly failed: number;
}

export interface PyResponse {
  readonly results?: PyRuleResult[];
  readonly bench?: PyBench;
  readonly versions: Record<string, string | null>;
}

export interface PyRuleRequest {
  readonly path: string;
  readonly text?: string;
  readonly events?: readonly Readonly<Record<string, unknown>>[];
  readonly columns?: readonly string[];
}

export interface PyRequest {
  readonly mode: 'convert' | 'bench';
  readonly rules: readonly PyRuleRequest[];
  readonly placeholders?: Readonly<Record<string, readonly string[]>>;
  readonly rounds?: number;
}

/** Runs convert.py once (one interpreter for the whole corpus) and returns its parsed answer. */
export function runPySigma(request: PyRequest): PyResponse {
  // No console script is needed, only the packages: `python3` runs with PYTHONPATH at .tools/pysigma.
  const { env } = ensurePythonTool('pysigma', pySigmaRequirements(), 'python3');
  const out = spawnSync('python3', [CONVERT_SCRIPT], {
    input: JSON.stringify(request),
    env,
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  if (out.status !== 0) throw new Error(`convert.py exited with ${out.status}: ${out.stderr}`);
  return JSON.parse(out.stdout) as PyResponse;
}
