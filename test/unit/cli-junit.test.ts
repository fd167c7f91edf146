import { escapeXmlAttribute, escapeXmlText, junitXml, type JUnitSuite } from '../../cli/junit';

const at = new Date('2026-11-02T10:00:00.123Z');

/** Attribute values of the first element named `tag`, unescaped as an XML parser would. */
function attrs(xml: string, tag: string): Record<string, string> {
  const m = new RegExp(`<${tag}\\s([^>]*)>`).exec(xml);
  if (!m) throw new Error(`no <${tag}> in ${xml}`);
  const out: Record<string, string> = {};
  for (const [, k, v] of m[1]!.matchAll(/([\w:-]+)="([^"]*)"/g)) out[k!] = unescape(v!);
  return out;
}
const unescape = (s: string) =>
  s.replace(/&(#\d+|lt|gt|amp|quot|apos);/g, (_, e: string) =>
    e.startsWith('#') ? String.fromCharCode(Number(e.slice(1))) : { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" }[e]!,
  );

describe('JUnit XML writer', () => {
  it('escapes markup in text, so a message cannot open or close an element', () => {
    expect(escapeXmlText(`a < b && c > d ]]> "q" 'a'`)).toBe(`a &lt; b &amp;&amp; c &gt; d ]]&gt; "q" 'a'`);
  });

  it('escapes quotes in attributes and keeps line breaks and tabs as character references', () => {
    expect(escapeXmlAttribute(`say "hi" & 'bye'\n\tnext\r`)).toBe('say &quot;hi&quot; &amp; &apos;bye&apos;&#10;&#9;next&#13;');
  });

  it('replaces characters XML 1.0 cannot carry (control characters, lone surrogates, U+FFFF)', () => {
    expect(escapeXmlText('nul\u0000 bell\u0007 esc\u001b lone\uD800 end\uFFFF')).toBe('nul\uFFFD bell\uFFFD esc\uFFFD lone\uFFFD end\uFFFD');
    // A well-formed surrogate pair is one valid character and stays.
    expect(escapeXmlText('emoji 😀')).toBe('emoji 😀');
  });

  it('counts tests, failures and errors per suite and overall, with times in seconds', () => {
    const suites: JUnitSuite[] = [
      {
        name: 'rules/a.yml',
        seconds: 0.25,
        timestamp: at,
        cases: [
          { name: 'ok', classname: 'rules/a.yml', seconds: 0 },
          { name: 'fails', classname: 'rules/a.yml', seconds: 0, failure: { message: 'expected match', type: 'fixture', body: 'x' } },
        ],
      },
      {
        name: 'rules/b.yml',
        seconds: 1.5,
        timestamp: at,
        cases: [{ name: 'push', classname: 'rules/b.yml', seconds: 1.5, error: { message: 'refused', type: 'rule-rejected', body: 'y' } }],
      },
    ];
    const xml = junitXml('detflow test (local)', suites);
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites ')).toBe(true);
    expect(attrs(xml, 'testsuites')).toEqual({ name: 'detflow test (local)', tests: '3', failures: '1', errors: '1', time: '1.750' });
    expect(attrs(xml, 'testsuite')).toEqual({ name: 'rules/a.yml', tests: '2', failures: '1', errors: '0', skipped: '0', time: '0.250', timestamp: '2026-11-02T10:00:00' });
    expect(xml.match(/<testsuite /g)).toHaveLength(2);
    expect(xml).toContain('<testcase name="ok" classname="rules/a.yml" time="0.000"/>');
    expect(xml).toContain('<error message="refused" type="rule-rejected">y</error>');
  });

  it('round-trips hostile names, messages and output through the escaping', () => {
    const name = `<img src="x" onerror='alert(1)'> & co`;
    const message = 'line 1\nline 2 with "quotes" & <tags>';
    const xml = junitXml('n', [
      {
        name,
        seconds: 0,
        timestamp: at,
        cases: [
          { name, classname: 'c', file: 'dir/a&b.yml', seconds: 0, failure: { message, type: 'lint', body: '</failure><testcase name="injected">' }, systemOut: 'warn <x>' },
        ],
      },
    ]);
    expect(attrs(xml, 'testcase')).toEqual({ name, classname: 'c', file: 'dir/a&b.yml', time: '0.000' });
    expect(attrs(xml, 'failure').message).toBe(message);
    expect(xml.match(/<testcase /g)).toHaveLength(1);
    expect(unescape(/<failure [^>]*>([^<]*)<\/failure>/.exec(xml)![1]!)).toBe('</failure><testcase name="injected">');
    expect(unescape(/<system-out>([^<]*)<\/system-out>/.exec(xml)![1]!)).toBe('warn <x>');
  });
});
