import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { toSplunk } from '../../sigma/backends';
import { SqlBackend } from '../../sigma/backends/sql';
import { compileRule } from '../../sigma/evaluate';
import { parseRule } from '../../sigma/parse';
import { ruleText } from '../sigma/support/rules';
import { runPySigma, type PyRuleResult } from './pysigma-runner';

/**
 * The edges of issue #15 against pySigma: numbers, regex escapes and anchors. Each case is a one-
 * selection rule and a few events, judged by pySigma's SQLite query (tools/pysigma/convert.py: a
 * TEXT COLLATE NOCASE column per field, REGEXP = Python's re.search), by the evaluator and by our
 * DuckDB SQL. Ours must agree with each other wherever both accept the rule; with pySigma they must
 * agree except on the events listed in `differs`, each with its reason (also in sigma/README.md).
 */

interface EdgeCase {
  readonly name: string;
  readonly item: string;
  readonly values: readonly unknown[];
  /** Indexes of `values` where pySigma's verdict differs from ours, and why. */
  readonly differs?: Readonly<Record<number, string>>;
  /** Why pySigma refuses the rule (Python's re lacks the construct), if it does. */
  readonly pyFails?: string;
}

const PY_DOLLAR = "Python's `$` (like PCRE's) also matches before a final newline; ours is RE2's end of value";
const PY_NO_ESCAPE = "pySigma checks regexes with Python's re, which has no such escape: it refuses the rule";
const PY_TEXT_COMPARE = "pySigma's SQLite query compares the TEXT column with 5 as text ('16' < '5', 'inf' > '5')";

const PY_OCTAL = "pySigma's YAML 1.1 reader takes 010 for the octal 8; detflow keeps the text as written";

const CASES: readonly EdgeCase[] = [
  { name: 'EventID: 4688', item: 'EventID: 4688', values: [4688, '4688', '04688', ' 4688', '+4688', '4688.0', '0x1250', '4.688e3'] },
  { name: 'A: 16', item: 'A: 16', values: ['16', '0x10', '0o20', '1.6e1', ' 16 ', '+16', 16] },
  { name: 'A: 0', item: 'A: 0', values: ['0', '0x0', '00', '-0', 0] },
  {
    name: 'A: 9007199254740993',
    item: 'A: 9007199254740993',
    values: ['9007199254740992', '9007199254740993'],
    differs: { 1: 'pySigma 1.5 writes the integer as the float 9007199254740992.0, which SQLite compares as that text' },
  },
  {
    name: 'A: 010',
    item: 'A: 010',
    values: ['010', '10', '8'],
    differs: { 0: PY_OCTAL, 2: PY_OCTAL },
  },
  {
    name: 'A|gt: 5',
    item: 'A|gt: 5',
    values: ['16', ' 16', '0x10', '1_000', 'inf', '4', 16],
    differs: { 0: PY_TEXT_COMPARE, 4: PY_TEXT_COMPARE, 6: PY_TEXT_COMPARE },
  },
  { name: '\\A', item: "A|re: '\\Aabc'", values: ['abc', 'Aabc', 'xabc'] },
  { name: '\\z', item: "A|re: 'abc\\z'", values: ['xabc', 'abcz', 'abc\n'], pyFails: PY_NO_ESCAPE },
  { name: '\\h', item: "A|re: 'a\\hb'", values: ['a b', 'a\tb', 'ahb'], pyFails: PY_NO_ESCAPE },
  { name: '\\Q…\\E', item: "A|re: '\\Qa.b\\E'", values: ['a.b', 'axb'], pyFails: PY_NO_ESCAPE },
  {
    name: '[[:digit:]]',
    item: "A|re: '^[[:digit:]]+$'",
    values: ['123', 'd:', '12a'],
    differs: { 0: "Python's re has no POSIX classes: it reads [[:digit:]] as the class [[:digt] followed by ']'" },
  },
  { name: 'abc$', item: "A|re: 'abc$'", values: ['xabc', 'abc\n', 'abcx'], differs: { 1: PY_DOLLAR } },
  { name: 'a.b', item: "A|re: 'a.b'", values: ['a\rb', 'a\nb', 'axb'] },
];

const detection = (item: string): string => `    sel:\n        ${item}\n    condition: sel`;

let instance: DuckDBInstance;
let con: DuckDBConnection;
const py = new Map<string, PyRuleResult>();

beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  con = await instance.connect();
  const answer = runPySigma({
    mode: 'convert',
    rules: CASES.map((c) => ({ path: c.name, text: ruleText(detection(c.item)), events: c.values.map((v) => ({ A: v, EventID: v })), columns: ['A', 'EventID'] })),
  });
  for (const r of answer.results ?? []) py.set(r.path, r);
}, 120_000);

afterAll(() => {
  con.closeSync();
  instance.closeSync();
});

async function duckVerdicts(where: string, values: readonly unknown[]): Promise<boolean[]> {
  const rows = values.map((v, i) => `(${i}, '${JSON.stringify({ A: v, EventID: v }).replace(/'/g, "''")}'::JSON)`).join(', ');
  const reader = await con.runAndReadAll(`SELECT i, (${where}) IS TRUE AS m FROM (VALUES ${rows}) AS t(i, raw) ORDER BY i`);
  return reader.getRowObjects().map((r) => r.m === true);
}

describe('pySigma at the edges: numbers, regex escapes and anchors', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const rule = parseRule(ruleText(detection(c.item)));
    const evaluator = c.values.map((v) => compileRule(rule).match({ A: v, EventID: v }));
    expect(await duckVerdicts(new SqlBackend().where(rule), c.values)).toEqual(evaluator);
    const result = py.get(c.name)!;
    if (c.pyFails !== undefined) {
      expect(result.error).toMatch(/bad escape/);
      return;
    }
    expect(result.sql_runtime_error).toBeUndefined();
    const pyVerdicts = c.values.map((_v, i) => result.verdicts!.includes(i));
    const differing = c.values.flatMap((_v, i) => (pyVerdicts[i] !== evaluator[i] ? [i] : []));
    expect({ values: c.values, differing }).toEqual({ values: c.values, differing: Object.keys(c.differs ?? {}).map(Number) });
  });

  it('pySigma passes PCRE-only escapes and `$` to Splunk unchanged; detflow writes what the evaluator means', () => {
    expect(py.get('\\A')!.splunk!.queries![0]).toContain('\\\\Aabc');
    expect(py.get('abc$')!.splunk!.queries![0]).toContain('abc$');
    expect(toSplunk(parseRule(ruleText(detection("A|re: 'abc$'"))))).toBe('* | regex A="abc\\\\z"');
    expect(toSplunk(parseRule(ruleText(detection("A|re: '\\Aabc'"))))).toBe('* | regex A="\\\\Aabc"');
  });
});
