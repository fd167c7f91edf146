import { convertRule, portability, toEsql, toKql, toLucene, toSplunk, toDuckDbSql, toLuceneRegex } from '../../sigma/backends';
import { SigmaError } from '../../sigma/errors';
import { parseRule } from '../../sigma/parse';
import { ruleText, rule } from './support/rules';
import { compileRule } from '../../sigma/evaluate';
import { runSearch } from '../fakes/splunk/spl';
import { parseEsql, runEsql } from '../fakes/elastic/esql';

const det = (d: string) => rule(d);
const basic = det(
  [
    '    selection:',
    "        Image|endswith: '\\\\cmd.exe'",
    "        CommandLine|contains: ['/c whoami', '/c net']",
    '    filter:',
    "        User: 'SYSTEM'",
    '    condition: selection and not filter',
  ].join('\n'),
);

function unsupported(fn: () => unknown): SigmaError {
  try {
    fn();
  } catch (e) {
    if (e instanceof SigmaError && e.code === 'backend-unsupported') return e;
    throw e;
  }
  throw new Error('expected backend-unsupported');
}

describe('DuckDB SQL backend', () => {
  it('converts a typical rule', () => {
    expect(toDuckDbSql(basic)).toBe(
      "SELECT * FROM events WHERE json_extract_string(raw, '$.\"Image\"') ILIKE '%\\\\cmd.exe' ESCAPE '\\' AND " +
        "(json_extract_string(raw, '$.\"CommandLine\"') ILIKE '%/c whoami%' ESCAPE '\\' OR json_extract_string(raw, '$.\"CommandLine\"') ILIKE '%/c net%' ESCAPE '\\') " +
        "AND NOT coalesce(lower(json_extract_string(raw, '$.\"User\"')) = 'system', false)",
    );
  });
  it('uses the caller field mapping', () => {
    expect(convertRule(basic, 'sql', { sql: { fieldExpression: (f) => `"${f}"`, table: 't' } })).toContain('"Image" ILIKE');
  });
  it('escapes LIKE metacharacters and quotes', () => {
    expect(toDuckDbSql(det('    s:\n        F|contains: "50%_o\'k"\n    condition: s'))).toContain("ILIKE '%50\\%\\_o''k%' ESCAPE '\\'");
  });
  it('rejects lookarounds (RE2) and the IPv4 /0 network with positions', () => {
    const e = unsupported(() => toDuckDbSql(det("    s:\n        F|re: 'a(?=b)'\n    condition: s")));
    expect([e.line, e.column]).toEqual([9, 9]);
    unsupported(() => toDuckDbSql(det("    s:\n        F|cidr: '0.0.0.0/0'\n    condition: s")));
  });
  it('converts IPv6 networks to a prefix test on the normalised hex address', () => {
    const sql = toDuckDbSql(det("    s:\n        F|cidr: 'fe80::/10'\n    condition: s"));
    // The field is read once, however many steps use it.
    expect(sql.split(`json_extract_string(raw, '$."F"')`)).toHaveLength(2);
    expect(sql).toMatch(/regexp_matches\(list_transform\(.*, '\^fe\[89ab\]'\)$/);
    expect(toDuckDbSql(det("    s:\n        F|cidr: '::1/128'\n    condition: s"))).toContain(", '00000000000000000000000000000001')");
  });
  it('expands non-octet-aligned IPv4 networks exactly', () => {
    const sql = toDuckDbSql(det("    s:\n        Ip|cidr: '172.16.0.0/12'\n    condition: s"));
    expect(sql.split('172\\.')).toHaveLength(17);
    expect(sql).toContain('|172\\.31\\.)');
  });
});

describe('Splunk SPL backend', () => {
  it('converts a typical rule', () => {
    expect(toSplunk(basic)).toBe('Image="*\\\\cmd.exe" (CommandLine="*/c whoami*" OR CommandLine="*/c net*") NOT User="SYSTEM"');
  });
  it('uses CASE() for cased and CIDR in search', () => {
    expect(toSplunk(det("    s:\n        F|cased: 'Ab'\n        Ip|cidr: '10.0.0.0/8'\n    condition: s"))).toBe('F=CASE("Ab") Ip="10.0.0.0/8"');
  });
  it('emits top-level regexes as | regex and moves a conjunct with a regex under OR/NOT to | where', () => {
    expect(toSplunk(det("    s:\n        A: x\n        F|re: 'a\\d+'\n    condition: s"))).toBe('A="x" | regex F="a\\\\d+"');
    // pySigma ends this in `| search OR …` after `| rex`/`| eval`, which regroups the condition.
    expect(toSplunk(det("    s:\n        A: x\n    t:\n        F|re: 'a'\n    condition: s or t"))).toBe(
      `* | where searchmatch("A=\\"x\\"") OR (isnotnull('F') AND match('F', "a"))`,
    );
    expect(toSplunk(det("    s:\n        A: x\n    t:\n        F|re: 'a'\n        G: y\n    condition: s and not t"))).toBe(
      `A="x" | where NOT ((isnotnull('F') AND match('F', "a")) AND searchmatch("G=\\"y\\""))`,
    );
  });
  it('matches ? wildcards and literal stars with an anchored, case-insensitive regex', () => {
    expect(toSplunk(det("    s:\n        F: 'a?c'\n    condition: s"))).toBe(`* | where (isnotnull('F') AND match('F', "(?si)^a.c\\\\z"))`);
    expect(toSplunk(det("    s:\n        F|cased: 'a\\*c%_'\n    condition: s"))).toBe(`* | where (isnotnull('F') AND match('F', "(?s)^a\\\\*c%_\\\\z"))`);
    expect(toSplunk(det("    s:\n        F.x y: ['a?', b]\n    condition: s"))).toBe(
      `* | where (isnotnull('F.x y') AND match('F.x y', "(?si)^a.\\\\z")) OR searchmatch("\\"F.x y\\"=\\"b\\"")`,
    );
    expect(toSplunk(det("    k:\n        - 'ev?l'\n    condition: k"))).toBe(`* | where (isnotnull('_raw') AND match('_raw', "(?si)ev.l"))`);
  });
  it('means in Splunk what the evaluator means (run by the fake Splunk), absent fields under NOT included', () => {
    const cases: Array<[string, Array<Record<string, string>>]> = [
      [
        "    s:\n        A: x\n    t:\n        F|re: '^a\\d$'\n    u:\n        G: 'b?d'\n    condition: (s or t) and not u",
        [{ A: 'X' }, { F: 'a1' }, { F: 'a1\n' }, { F: 'A1' }, { A: 'x', G: 'BID' }, { A: 'x', G: 'b\nd' }, { A: 'x', G: 'bd' }, { G: 'bid' }, {}],
      ],
      ["    s:\n        F|contains: ['50%', 'a_b', '*?']\n    condition: not s", [{ F: 'x50%y' }, { F: 'a_b' }, { F: 'axb' }, { F: '**' }, { F: '*?' }, {}]],
      [
        "    s:\n        F|fieldref: G\n    t:\n        H|re|i: 'ZZ'\n    condition: not s or t",
        [{ F: 'a', G: 'A' }, { F: 'a', G: 'b' }, { F: 'a' }, { F: 'a', G: 'a', H: 'zz' }],
      ],
    ];
    for (const [d, events] of cases) {
      const r = det(d);
      const spl = toSplunk(r);
      const rows = events.map((e, i) => ({ ...e, i: String(i) }));
      const bySplunk = runSearch(`search ${spl}`, { events: () => rows }).map((row) => Number(row.i));
      const byEvaluator = events.flatMap((e, i) => (compileRule(r).match(e) ? [i] : []));
      expect({ spl, matched: bySplunk.sort() }).toEqual({ spl, matched: byEvaluator });
    }
  });
  it('turns keywords into substring free-text terms and exists into F=*', () => {
    expect(toSplunk(det("    k:\n        - 'evil cmd'\n    s:\n        F|exists: true\n    condition: k and s"))).toBe('"*evil cmd*" F=*');
  });
});

describe('ES|QL backend', () => {
  it('converts a typical rule with exact case-insensitivity', () => {
    expect(toEsql(basic)).toBe(
      'FROM logs-* | WHERE TO_LOWER(Image) LIKE "*\\\\\\\\cmd.exe" AND (TO_LOWER(CommandLine) LIKE "*/c whoami*" OR TO_LOWER(CommandLine) LIKE "*/c net*") AND NOT COALESCE(TO_LOWER(User) == "system", false)',
    );
  });
  it('translates simple regexes to Lucene syntax and rejects others', () => {
    expect(toLuceneRegex('a\\d+')).toBe('.*(a[0-9]+).*');
    expect(toLuceneRegex('^cmd|ps$')).toBeDefined();
    expect(toLuceneRegex('\\bword\\b')).toBeUndefined();
    unsupported(() => toEsql(det("    s:\n        F|re|m: '^abc'\n    condition: s")));
    unsupported(() => toEsql(det("    s:\n        F|re|i: '[0-Z]'\n    condition: s")));
    unsupported(() => toEsql(det("    s:\n        F|re: '[\\W]'\n    condition: s")));
  });
  it('folds the i flag into a lower-cased RLIKE over TO_LOWER(), spells \\W and unwraps a whole-pattern group', () => {
    expect(toEsql(det("    s:\n        F|re|i: 'A[B-D]\\W'\n    condition: s"))).toBe('FROM logs-* | WHERE TO_LOWER(F) RLIKE ".*(a[b-d][^A-Za-z0-9_]).*"');
    expect(toEsql(det("    s:\n        F|re: '(^0oa.*|x)'\n    condition: s"))).toBe('FROM logs-* | WHERE F RLIKE "(0oa[^\\n]*).*|.*(x).*"');
  });
  it('means in the fake ES|QL what the evaluator means for the regexes it now takes', () => {
    const cases: Array<[string, string[]]> = [
      ["F|re|i: 'A[B-D]\\W'", ['xabc', 'xAB-', 'AC d', 'ab_', 'ABD\n']],
      ["F|re: '(^0oa.*|[a-z]+@x)'", ['0oa1', 'a0oa', 'joe@x', 'JOE@x', '@x']],
      ["F|re|s: 'a.b'", ['a\nb', 'axb', 'ab']],
    ];
    for (const [item, values] of cases) {
      const r = det(`    s:\n        ${item}\n    condition: s`);
      const query = toEsql(r, { index: 'i' });
      const index = { name: 'i', mapping: new Map([['F', 'keyword' as const]]), docs: values.map((v, n) => ({ id: String(n), version: 1, fields: new Map([['F', v]]) })) };
      const answer = runEsql(parseEsql(`${query} | KEEP F`), [index], () => true);
      const byEsql = answer.values.map((row) => row[0]);
      expect({ query, matched: byEsql }).toEqual({ query, matched: values.filter((v) => compileRule(r).match({ F: v })) });
    }
  });
  it('rejects keyword searches', () => {
    unsupported(() => toEsql(det("    k:\n        - 'evil'\n    condition: k")));
  });
  it('uses CIDR_MATCH and DATE_EXTRACT', () => {
    expect(toEsql(det("    s:\n        Ip|cidr: '10.0.0.0/8'\n        T|hour|gte: 20\n    condition: s"))).toBe(
      'FROM logs-* | WHERE CIDR_MATCH(Ip, "10.0.0.0/8") AND DATE_EXTRACT("hour_of_day", T) >= 20',
    );
  });
});

describe('Lucene backend', () => {
  it('converts with escaping and lowercase values (normalised index)', () => {
    expect(toLucene(basic)).toBe('Image:*\\\\cmd.exe AND (CommandLine:*\\/c\\ whoami* OR CommandLine:*\\/c\\ net*) AND NOT User:system');
  });
  it('emits exact character-class regexes for case-preserving indexes', () => {
    expect(toLucene(det("    s:\n        F: 'Ab*'\n    condition: s"), { caseSensitiveIndex: true })).toBe('F:/[aA][bB].*/');
  });
  it('rejects field references', () => {
    unsupported(() => toLucene(det('    s:\n        F|fieldref: G\n    condition: s')));
  });
});

describe('KQL backend', () => {
  it('searches every column with a regex for a keyword with inner wildcards', () => {
    expect(toKql(det('    k:\n        - \'near "*": syntax?error\'\n    condition: k'))).toBe('union * | where * matches regex @"(?i)(?s)near "".*"": syntax.error"');
  });
  it('converts a typical rule with case-insensitive operators', () => {
    expect(toKql(basic, { table: 'DeviceProcessEvents' })).toBe(
      'DeviceProcessEvents | where Image endswith @"\\cmd.exe" and (CommandLine contains @"/c whoami" or CommandLine contains @"/c net") and not(User =~ @"SYSTEM")',
    );
  });
  it('uses _cs operators for cased and regex for inner wildcards', () => {
    expect(toKql(det("    s:\n        F|cased|contains: 'Ab'\n        G: 'a*b'\n    condition: s"))).toBe(
      'union * | where F contains_cs @"Ab" and G matches regex @"(?i)(?s)^a.*b$"',
    );
  });
  it('maps cidr to ipv4_is_in_range', () => {
    expect(toKql(det("    s:\n        Ip|cidr: '10.0.0.0/8'\n    condition: s"))).toContain('ipv4_is_in_range(Ip, @"10.0.0.0/8")');
  });
});

describe('placeholders in backends', () => {
  const r = parseRule(ruleText("    s:\n        User|expand: '%Admins%'\n    condition: s"));
  it('resolve from options', () => {
    expect(toSplunk(r, { placeholders: { Admins: ['root', 'adm'] } })).toBe('User="root" OR User="adm"');
  });
  it('fail without values', () => {
    expect(() => toSplunk(r)).toThrow(expect.objectContaining({ code: 'placeholder-unresolved' }));
  });
});

describe('portability', () => {
  it('scores a plain process_creation rule as portable everywhere', () => {
    const p = portability(basic);
    expect(p.score).toBe(1);
    expect(Object.values(p.targets).every((t) => t.expressible)).toBe(true);
  });
  it('explains each target that cannot express a rule', () => {
    const r = det("    k:\n        - 'evil'\n    s:\n        Weird: x\n    condition: k or s");
    const p = portability(r);
    expect(p.targets.local.expressible).toBe(true);
    expect(p.targets.elastic.reasons[0]).toMatch(/keyword/);
    expect(p.targets.sentinel.reasons[0]).toMatch(/field 'Weird' has no mapping/);
    expect(p.score).toBe(0.5);
  });
});
