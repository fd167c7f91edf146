/**
 * JUnit XML, the report format CI systems read (GitHub Actions reporters, GitLab's
 * artifacts:reports:junit, Jenkins). Only the common subset: testsuites › testsuite › testcase with
 * failure, error and system-out.
 */
export type JUnitProblem = { message: string; type: string; body: string };

export type JUnitCase = {
  name: string;
  classname: string;
  /** Path of the file the case is about; reporters use it to annotate the file. */
  file?: string;
  seconds: number;
  /** The case ran and did not pass (lint errors, a fixture that failed). */
  failure?: JUnitProblem;
  /** The case could not run (the service refused the rule or a fixture). */
  error?: JUnitProblem;
  systemOut?: string;
};

export type JUnitSuite = { name: string; seconds: number; timestamp: Date; cases: JUnitCase[] };

// XML 1.0 allows only tab, LF, CR and these ranges; anything else (other control characters, lone
// surrogates, U+FFFE/U+FFFF) makes the whole document unreadable, so it is replaced.
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Text content: `>` is escaped too, so `]]>` in a message cannot end anything. */
export function escapeXmlText(text: string): string {
  return text.replace(NOT_XML_CHAR, '\uFFFD').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Attribute values: quotes escaped, and tab/LF/CR as references, since parsers turn literal ones into spaces. */
export function escapeXmlAttribute(text: string): string {
  return escapeXmlText(text).replace(/"/g, '&quot;').replace(/'/g, '&apos;').replace(/\t/g, '&#9;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;');
}

const seconds = (s: number) => s.toFixed(3);

function attributes(pairs: Array<[string, string | number | undefined]>): string {
  return pairs
    .filter((p): p is [string, string | number] => p[1] !== undefined)
    .map(([k, v]) => ` ${k}="${escapeXmlAttribute(String(v))}"`)
    .join('');
}

function counts(cases: readonly JUnitCase[]) {
  return { tests: cases.length, failures: cases.filter((c) => c.failure).length, errors: cases.filter((c) => c.error).length };
}

function problemXml(tag: 'failure' | 'error', p: JUnitProblem): string {
  return `      <${tag}${attributes([
    ['message', p.message],
    ['type', p.type],
  ])}>${escapeXmlText(p.body)}</${tag}>\n`;
}

function caseXml(c: JUnitCase): string {
  const head = `    <testcase${attributes([
    ['name', c.name],
    ['classname', c.classname],
    ['file', c.file],
    ['time', seconds(c.seconds)],
  ])}`;
  const children =
    (c.failure ? problemXml('failure', c.failure) : '') +
    (c.error ? problemXml('error', c.error) : '') +
    (c.systemOut ? `      <system-out>${escapeXmlText(c.systemOut)}</system-out>\n` : '');
  return children ? `${head}>\n${children}    </testcase>\n` : `${head}/>\n`;
}

export function junitXml(name: string, suites: readonly JUnitSuite[]): string {
  const all = suites.flatMap((s) => s.cases);
  const total = counts(all);
  const time = suites.reduce((sum, s) => sum + s.seconds, 0);
  let xml = '<?xml version="1.0" encoding="UTF-8"?>\n';
  xml += `<testsuites${attributes([
    ['name', name],
    ['tests', total.tests],
    ['failures', total.failures],
    ['errors', total.errors],
    ['time', seconds(time)],
  ])}>\n`;
  for (const s of suites) {
    const c = counts(s.cases);
    xml += `  <testsuite${attributes([
      ['name', s.name],
      ['tests', c.tests],
      ['failures', c.failures],
      ['errors', c.errors],
      ['skipped', 0],
      ['time', seconds(s.seconds)],
      ['timestamp', s.timestamp.toISOString().replace(/\.\d{3}Z$/, '')],
    ])}>\n`;
    for (const tc of s.cases) xml += caseXml(tc);
    xml += '  </testsuite>\n';
  }
  return xml + '</testsuites>\n';
}
