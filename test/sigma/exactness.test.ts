import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { toEsql, toKql, toLucene, toLuceneRegex, toSplunk } from '../../sigma/backends';
import { SqlBackend } from '../../sigma/backends/sql';
import { SigmaError } from '../../sigma/errors';
import { compileRule } from '../../sigma/evaluate';
import { lintText } from '../../sigma/lint';
import { lintForTarget } from '../../sigma/lint/for-target';
import { parseRule, parseSigma } from '../../sigma/parse';
import { translateRegex } from '../../sigma/regex-dialect';
import { rule, ruleText } from './support/rules';

/**
 * Issue #15 "Exactness": each case is a minimal reproduction, judged by the evaluator and by the
 * local target's DuckDB SQL over the very JSON text of the event (so numbers keep their digits).
 */

let instance: DuckDBInstance;
let con: DuckDBConnection;

beforeAll(async () => {
  instance = await DuckDBInstance.create(':memory:');
  con = await instance.connect();
});

afterAll(() => {
  con.closeSync();
  instance.closeSync();
});

const one = (field: string, value: string): string => `    sel:\n        ${field}: ${value}\n    condition: sel`;

/** [evaluator verdict, DuckDB verdict] for one event given as JSON text. */
async function verdicts(detection: string, json: string): Promise<[boolean, boolean]> {
  const r = rule(detection);
  const evaluator = compileRule(r).match(JSON.parse(json) as Record<string, unknown>);
  const where = new SqlBackend().where(r);
  const rows = await con.runAndReadAll(`SELECT (${where}) IS TRUE AS m FROM (SELECT '${json.replace(/'/g, "''")}'::JSON AS raw)`);
  return [evaluator, rows.getRowObjects()[0]!.m === true];
}

async function expectBoth(detection: string, json: string, expected: boolean): Promise<void> {
  expect({ json, verdicts: await verdicts(detection, json) }).toEqual({ json, verdicts: [expected, expected] });
}

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof SigmaError) return e.message;
    throw e;
  }
  throw new Error('expected a refusal');
}

describe('item 1: PCRE escapes mean what PCRE means, or the rule is refused naming them', () => {
  const re = (p: string) => one('A|re', `'${p}'`);

  it.each([
    ['\\Aabc', '{"A":"abc"}', true],
    ['\\Aabc', '{"A":"Aabc"}', false],
    ['\\Aabc', '{"A":"xabc"}', false],
    ['abc\\z', '{"A":"xabc"}', true],
    ['abc\\z', '{"A":"abcz"}', false],
    ['abc\\z', '{"A":"abc\\n"}', false],
    ['a\\hb', '{"A":"a\\tb"}', true],
    ['a\\hb', '{"A":"a b"}', true],
    ['a\\hb', '{"A":"ahb"}', false],
    ['a\\hb', '{"A":"a\\nb"}', false],
    ['a\\eb', '{"A":"a\\u001bb"}', true],
    ['a\\eb', '{"A":"aeb"}', false],
    ['\\Qa.b\\E$', '{"A":"xa.b"}', true],
    ['\\Qa.b\\E$', '{"A":"axb"}', false],
    ['\\Qa.b\\E$', '{"A":"a.b\\\\E"}', false],
    ['^[[:digit:]]+$', '{"A":"0123"}', true],
    ['^[[:digit:]]+$', '{"A":"12a"}', false],
    ['^[[:digit:]]+$', '{"A":"d:"}', false],
    ['^[[:alpha:]_]+$', '{"A":"ab_C"}', true],
    ['a\\x{41}', '{"A":"aA"}', true],
    ['a\\x{41}', '{"A":"ax{41}"}', false],
    ['^[]a]+$', '{"A":"]a]"}', true],
  ])('/%s/ on %s: evaluator and DuckDB say %s', async (pattern, json, expected) => {
    await expectBoth(re(pattern), json, expected);
  });

  it('translates each escape for the engine of each target', () => {
    const r = (p: string) => rule(re(p));
    expect(toSplunk(r('\\Aabc\\z'))).toBe('* | regex A="\\\\Aabc\\\\z"');
    expect(toSplunk(r('a\\vb'))).toBe('* | regex A="a\\\\x0bb"');
    expect(toKql(r('a\\hb\\e'))).toContain('a[\\t \\x{a0}');
    expect(toKql(r('a\\hb\\e'))).toContain('b\\x1b');
    expect(toKql(r('\\Qa.b\\E'))).toBe('union * | where A matches regex @"a\\.b"');
  });

  it('refuses \\Z where RE2 has no such anchor, naming the construct and the target', () => {
    const r = rule(re('abc\\Z'));
    expect(refusal(() => new SqlBackend().where(r))).toMatch(/duckdb-sql.*\\Z.*RE2/);
    expect(refusal(() => toKql(r))).toMatch(/kql.*\\Z/);
    expect(toSplunk(r)).toBe('* | regex A="abc\\\\Z"');
    // PCRE's \Z: the end, or before a final newline.
    expect(compileRule(r).match({ A: 'abc\n' })).toBe(true);
    expect(compileRule(r).match({ A: 'abc\nx' })).toBe(false);
  });

  it('refuses escapes V8 would read as a plain letter, for the evaluator and the local target', () => {
    for (const p of ['\\p{L}', 'a\\Kb', '\\Gx', '\\R']) {
      const r = rule(re(p));
      expect(refusal(() => compileRule(r))).toMatch(/cannot be evaluated exactly/);
      expect(refusal(() => new SqlBackend().where(r))).toMatch(/evaluator \(V8\)|RE2/);
    }
    expect(refusal(() => compileRule(rule(re('^[[:^digit:]]$'))))).toMatch(/negated POSIX class/);
  });

  it('Lucene and ES|QL: no escapes, anchored; refuse what has no Lucene form', () => {
    for (const p of ['\\Aabc', 'abc\\z', 'a\\hb', '\\Qa\\E', '[[:digit:]]', '[]a]', '\\x{41}']) {
      expect(toLuceneRegex(p)).toBeUndefined();
      expect(refusal(() => toLucene(rule(re(p))))).toMatch(/^lucene: .*: (the escape|POSIX|a '\]' first)/);
      expect(refusal(() => toEsql(rule(re(p))))).toMatch(/^esql: .*: (the escape|POSIX|a '\]' first)/);
    }
    // Lucene reads `\t` as the letter t: control characters are written as themselves.
    expect(toLuceneRegex('a\\tb')).toBe('.*(a\tb).*');
    expect(toLuceneRegex('a\\sb')).toBe('.*(a[ \t\n\f\r]b).*');
    // Lucene's `.` would cross a newline; RE2's does not.
    expect(toLuceneRegex('a.b')).toBe('.*(a[^\n]b).*');
    // Each top-level alternative keeps its own anchor.
    expect(toLuceneRegex('^cmd|ps$')).toBe('(cmd).*|.*(ps)');
  });

  it('V8 reads `.`, `\\s` and `m`-flag anchors the way RE2 does', async () => {
    await expectBoth(re('a.b'), '{"A":"a\\rb"}', true);
    await expectBoth(re('a.b'), '{"A":"a\\nb"}', false);
    await expectBoth(re('a\\sb'), '{"A":"a\\u00a0b"}', false);
    await expectBoth(re('a\\sb'), '{"A":"a\\u000bb"}', false);
    await expectBoth(re('a[\\S]b'), '{"A":"a\\u00a0b"}', true);
    await expectBoth(re('(?m)^b$'), '{"A":"a\\rb"}', false);
    await expectBoth(re('(?m)^b$'), '{"A":"a\\nb\\nc"}', true);
  });

  it('keeps the three dialects of one pattern apart', () => {
    const f = { multiline: false, dotAll: false };
    expect(translateRegex('\\Aa$', f, 'v8').pattern).toBe('^a$');
    expect(translateRegex('\\Aa$', f, 're2').pattern).toBe('\\Aa$');
    expect(translateRegex('\\Aa$', f, 'pcre').pattern).toBe('\\Aa\\z');
    expect(translateRegex('a\\Z', f, 're2').refused).toMatch(/\\Z/);
  });
});

describe('item 3: `$` is the end of the value on every target', () => {
  it('the evaluator follows DuckDB RE2: `abc$` does not match "abc\\n"', async () => {
    await expectBoth(one('A|re', "'abc$'"), '{"A":"abc\\n"}', false);
    await expectBoth(one('A|re', "'abc$'"), '{"A":"xabc"}', true);
  });
  it('Splunk (PCRE, where `$` also matches before a final newline) gets `\\z`; KQL and Lucene keep `$`', () => {
    const r = rule(one('A|re', "'abc$'"));
    expect(toSplunk(r)).toBe('* | regex A="abc\\\\z"');
    expect(toKql(r)).toBe('union * | where A matches regex @"abc$"');
    expect(toLucene(r)).toBe('A:/.*(abc)/');
    // Under the m flag `$` is a line end in every engine and stays as written.
    expect(toSplunk(rule(one('A|re|m', "'abc$'")))).toBe('* | regex A="(?m)abc$"');
  });
});

describe('item 2: a number matches its decimal text, digit for digit', () => {
  it.each([
    ['EventID', '4688', '{"EventID":4688}', true],
    ['EventID', '4688', '{"EventID":"4688"}', true],
    ['EventID', '4688', '{"EventID":"04688"}', false],
    ['A', '16', '{"A":"0x10"}', false],
    ['A', '16', '{"A":"0o20"}', false],
    ['A', '16', '{"A":"1.6e1"}', false],
    ['A', '16', '{"A":" 16 "}', false],
    ['A', '16', '{"A":"+16"}', false],
    ['A', '16', '{"A":"16.0"}', false],
    ['A', '0', '{"A":"0x0"}', false],
    ['A', '0', '{"A":"0"}', true],
    ['A', '0', '{"A":0}', true],
    ['A', '-5', '{"A":"-5"}', true],
    ['A', '-5', '{"A":-5}', true],
    ['A', '1.5', '{"A":"1.5"}', true],
    ['A', '1.5', '{"A":1.5}', true],
    ['A', '1.5', '{"A":"1.50"}', false],
    ['A', '9007199254740993', '{"A":"9007199254740992"}', false],
    ['A', '9007199254740993', '{"A":"9007199254740993"}', true],
    ['A', '9007199254740992', '{"A":"9007199254740993"}', false],
    ['A', '0x10', '{"A":"16"}', true],
    ['A', '0x10', '{"A":"0x10"}', false],
  ])('%s: %s on %s: evaluator and DuckDB say %s', async (field, value, json, expected) => {
    await expectBoth(one(field, value), json, expected);
  });

  it('every backend writes the exact digits', () => {
    const r = rule(one('A', '9007199254740993'));
    expect(new SqlBackend().where(r)).toBe(`json_extract_string(raw, '$."A"') = '9007199254740993'`);
    expect(toSplunk(r)).toBe('A=9007199254740993');
    expect(toKql(r)).toBe('union * | where A == 9007199254740993');
    expect(toEsql(r)).toBe('FROM logs-* | WHERE A == 9007199254740993');
    expect(toLucene(r)).toBe('A:9007199254740993');
    expect(toLucene(rule(one('A', '-5')))).toBe('A:\\-5');
    expect(toLucene(rule(one('A', '1e21')))).toBe('A:1e\\+21');
  });

  it('a number keyword is a substring search for its text in the evaluator too', async () => {
    await expectBoth('    k:\n        - 4688\n    condition: k', '{"A":"id 4688 seen"}', true);
    await expectBoth('    k:\n        - 4688\n    condition: k', '{"A":"id 468 seen"}', false);
  });

  it('comparisons read decimal text only: no spaces, hex, underscores, inf or nan', async () => {
    const gt = one('A|gt', '5');
    for (const json of ['{"A":"0x10"}', '{"A":" 16"}', '{"A":"1_000"}', '{"A":"inf"}', '{"A":"Infinity"}', '{"A":"16\\n"}']) await expectBoth(gt, json, false);
    for (const json of ['{"A":"16"}', '{"A":16}', '{"A":"1.6e1"}', '{"A":"+16"}', '{"A":"016"}', '{"A":"6."}']) await expectBoth(gt, json, true);
  });
});

describe('item 4: octal-looking values and leading zeros in addresses', () => {
  it('`A: 010` is the text "010" (YAML 1.2 would read 10, pySigma 8)', async () => {
    await expectBoth(one('A', '010'), '{"A":"010"}', true);
    await expectBoth(one('A', '010'), '{"A":10}', false);
    await expectBoth(one('A', '010'), '{"A":8}', false);
    await expectBoth(one('A', '010'), '{"A":"8"}', false);
  });

  it.each([
    ['10.1.2.3', true],
    ['010.1.2.3', false],
    ['10.01.2.3', false],
    ['10.1.2.003', false],
    ['10.1.2', false],
    ['10.1.2.256', false],
    ['10.x.2.3', false],
    [' 10.1.2.3 ', true],
    ['10.0.0.0', true],
    ['11.1.2.3', false],
  ])('IP|cidr 10.0.0.0/8 on %j: evaluator and DuckDB say %s', async (ip, expected) => {
    await expectBoth(one('IP|cidr', "'10.0.0.0/8'"), JSON.stringify({ IP: ip }), expected);
  });

  it('the same for a /12, a /32 and an IPv4 tail of an IPv6 address', async () => {
    await expectBoth(one('IP|cidr', "'172.16.0.0/12'"), '{"IP":"172.31.255.1"}', true);
    await expectBoth(one('IP|cidr', "'172.16.0.0/12'"), '{"IP":"172.032.0.1"}', false);
    await expectBoth(one('IP|cidr', "'10.1.2.3/32'"), '{"IP":"10.1.2.3"}', true);
    await expectBoth(one('IP|cidr', "'10.1.2.3/32'"), '{"IP":"10.1.2.30"}', false);
    await expectBoth(one('IP|cidr', "'::ffff:0:0/96'"), '{"IP":"::ffff:10.1.2.3"}', true);
    await expectBoth(one('IP|cidr', "'::ffff:0:0/96'"), '{"IP":"::ffff:10.01.2.3"}', false);
  });
});

const lintCodes = (detection: string): string[] => lintText(ruleText(detection)).findings.map((f) => `${f.severity}:${f.code}`);

describe('item 4 (lint): an octal-looking plain value says how it is read', () => {
  it('warns on 010 (pySigma: 8) but not on 00000429 (pySigma: the text too) or a quoted value', () => {
    expect(lintCodes(one('A', '010'))).toContain('info:octal_looking_number');
    expect(lintCodes(one('A', '00000429'))).not.toContain('info:octal_looking_number');
    expect(lintCodes(one('A', "'010'"))).not.toContain('info:octal_looking_number');
  });
});

describe('item 6: a search identifier containing | is accepted with a warning', () => {
  // After SigmaHQ rules/macos/process_creation/proc_creation_macos_file_and_directory_discovery.yml
  // (Daniil Yugoslavskiy, oscd.community; Detection Rule License 1.1), reduced to two selections.
  const detection = [
    '    select_find_execution:',
    "        Image: '/usr/bin/find'",
    '    select_tree_execution|endswith:',
    "        Image: '/tree'",
    '    condition: 1 of select*',
  ].join('\n');

  it('parses, evaluates the identifier by its `x of` pattern, and reads `|endswith` as part of the name', async () => {
    const r = parseRule(ruleText(detection));
    expect(r.errors).toEqual([]);
    expect([...r.detection.identifiers.keys()]).toContain('select_tree_execution|endswith');
    await expectBoth(detection, '{"Image":"/tree"}', true);
    await expectBoth(detection, '{"Image":"/usr/bin/tree"}', false);
  });

  it('lint warns, not errs', () => {
    const codes = lintCodes(detection);
    expect(codes).toContain('warning:identifier_with_pipe');
    expect(codes.filter((c) => c.startsWith('error:'))).toEqual([]);
  });

  it('other characters stay errors', () => {
    expect(parseSigma(ruleText('    sel.x:\n        A: 1\n    condition: 1 of sel*')).errors.map((e) => e.code)).toContain('identifier-invalid');
  });
});

describe('item 7: duplicate values differing in case are duplicates only where case does not matter', () => {
  it.each([
    ["A|base64offset|contains: ['Ab', 'aB']", false],
    ["A|cased: ['Ab', 'aB']", false],
    ["A|base64: ['Ab', 'aB']", false],
    ["A|re: ['Ab', 'aB']", false],
    ["A|re|i: ['Ab', 'aB']", true],
    ["A: ['Ab', 'aB']", true],
    ["A|contains: ['Ab', 'aB']", true],
    ["A|cased: ['Ab', 'Ab']", true],
    ["A|base64offset|contains: ['Ab', 'Ab']", true],
  ])('%s → duplicate: %s', (item, duplicate) => {
    const codes = lintCodes(`    sel:\n        ${item}\n    condition: sel`);
    expect(codes.includes('warning:sigmahq_field_duplicate_value')).toBe(duplicate);
  });
});

describe('item 1: a malformed pattern is still a parse error', () => {
  it('a trailing backslash is regex-invalid when the rule is read', () => {
    expect(parseSigma(ruleText(one('A|re', "'abc\\'"))).errors.map((e) => e.code)).toContain('regex-invalid');
  });
});

describe('item 1: lint names the construct and the target that refuses it', () => {
  it('\\Z: refused for local (RE2) and sentinel (RE2), accepted for splunk (PCRE)', () => {
    const text = ruleText(one('CommandLine|re', "'abc\\Z'"));
    const refusal = (kind: 'local' | 'splunk' | 'sentinel') => lintForTarget(text, { name: `my-${kind}`, kind }).findings.filter((f) => f.code === 'target_unsupported');
    expect(refusal('local').map((f) => f.message)).toEqual([expect.stringMatching(/^local target my-local cannot express this exactly: .*\\Z.*RE2/)]);
    expect(refusal('sentinel').map((f) => f.message)).toEqual([expect.stringMatching(/^sentinel target my-sentinel .*\\Z/)]);
    expect(refusal('splunk')).toEqual([]);
  });
});
