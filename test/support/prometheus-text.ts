/**
 * A strict reader of the Prometheus text format 0.0.4, for tests: it throws on anything a
 * Prometheus server would refuse (a malformed line, a sample before its TYPE, a family typed twice,
 * a bad label, a histogram without its +Inf bucket or with buckets that go down).
 */

export type Sample = { name: string; labels: Record<string, string>; value: number };
export type Family = { name: string; help: string | undefined; type: string; samples: Sample[] };

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseLabels(text: string, line: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let i = 0;
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new Error(`label without "=": ${line}`);
    const name = text.slice(i, eq).trim();
    if (!LABEL_NAME.test(name)) throw new Error(`bad label name ${JSON.stringify(name)}: ${line}`);
    if (name in labels) throw new Error(`label ${name} given twice: ${line}`);
    if (text[eq + 1] !== '"') throw new Error(`label value not quoted: ${line}`);
    let j = eq + 2;
    let value = '';
    for (;;) {
      if (j >= text.length) throw new Error(`unterminated label value: ${line}`);
      const c = text[j]!;
      if (c === '"') break;
      if (c === '\\') {
        const n = text[j + 1];
        if (n === 'n') value += '\n';
        else if (n === '\\' || n === '"') value += n;
        else throw new Error(`bad escape \\${n} in label value: ${line}`);
        j += 2;
        continue;
      }
      if (c === '\n') throw new Error(`newline in label value: ${line}`);
      value += c;
      j++;
    }
    labels[name] = value;
    i = j + 1;
    if (i < text.length) {
      if (text[i] !== ',') throw new Error(`expected "," between labels: ${line}`);
      i++;
    }
  }
  return labels;
}

function parseValue(text: string, line: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  if (text === 'NaN') return NaN;
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) throw new Error(`bad sample value ${JSON.stringify(text)}: ${line}`);
  return Number(text);
}

/** The family a sample belongs to: its own name, or a histogram's/summary's name without the suffix. */
function familyOf(families: Map<string, Family>, name: string): Family | undefined {
  const own = families.get(name);
  if (own) return own;
  for (const suffix of ['_bucket', '_sum', '_count']) {
    if (!name.endsWith(suffix)) continue;
    const f = families.get(name.slice(0, -suffix.length));
    if (f && (f.type === 'histogram' || (f.type === 'summary' && suffix !== '_bucket'))) return f;
  }
  return undefined;
}

export function parsePrometheusText(text: string): Map<string, Family> {
  // An empty exposition is valid (an exporter with nothing recorded yet answers one).
  if (text !== '' && !text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const families = new Map<string, Family>();
  const helps = new Map<string, string>();
  const sampleLine = new RegExp(`^(${NAME})(?:\\{(.*)\\})?[ \\t]+(\\S+)(?:[ \\t]+(-?\\d+))?$`);
  for (const line of text.slice(0, -1).split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const m = /^#[ \t]+(HELP|TYPE)[ \t]+(\S+)(?:[ \t]+(.*))?$/.exec(line);
      if (!m) continue; // a plain comment
      const [, kind, name, rest = ''] = m;
      if (!new RegExp(`^${NAME}$`).test(name!)) throw new Error(`bad metric name in ${kind}: ${line}`);
      if (kind === 'HELP') {
        if (helps.has(name!)) throw new Error(`HELP given twice for ${name}`);
        helps.set(name!, rest);
        const f = families.get(name!);
        if (f) f.help = rest;
      } else {
        if (!TYPES.has(rest)) throw new Error(`bad type ${rest}: ${line}`);
        if (families.has(name!)) throw new Error(`TYPE given twice for ${name}`);
        families.set(name!, { name: name!, help: helps.get(name!), type: rest, samples: [] });
      }
      continue;
    }
    const m = sampleLine.exec(line);
    if (!m) throw new Error(`malformed sample line: ${line}`);
    const [, name, labelText, valueText] = m;
    const family = familyOf(families, name!);
    if (!family) throw new Error(`sample ${name} before (or without) its TYPE line`);
    family.samples.push({ name: name!, labels: labelText === undefined ? {} : parseLabels(labelText, line), value: parseValue(valueText!, line) });
  }
  for (const f of families.values()) if (f.type === 'histogram') checkHistogram(f);
  return families;
}

function checkHistogram(f: Family): void {
  const series = new Map<string, Sample[]>();
  for (const s of f.samples) {
    if (s.name !== `${f.name}_bucket`) continue;
    const { le, ...rest } = s.labels;
    if (le === undefined) throw new Error(`${f.name}_bucket without le`);
    const key = JSON.stringify(Object.entries(rest).sort());
    series.set(key, [...(series.get(key) ?? []), s]);
  }
  for (const [key, buckets] of series) {
    const sorted = [...buckets].sort((a, b) => parseValue(a.labels.le!, '') - parseValue(b.labels.le!, ''));
    if (sorted.at(-1)!.labels.le !== '+Inf') throw new Error(`${f.name}${key} has no +Inf bucket`);
    for (let i = 1; i < sorted.length; i++) if (sorted[i]!.value < sorted[i - 1]!.value) throw new Error(`${f.name}${key}: buckets are not cumulative`);
    const labels = Object.fromEntries(JSON.parse(key) as Array<[string, string]>);
    const count = f.samples.find((s) => s.name === `${f.name}_count` && sameLabels(s.labels, labels));
    if (!count || count.value !== sorted.at(-1)!.value) throw new Error(`${f.name}${key}: _count differs from the +Inf bucket`);
  }
}

function sameLabels(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}

/** The value of the sample of `name` whose labels include `labels` (0 when there is none). */
export function sampleValue(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const family = familyOf(families, name);
  const s = family?.samples.find((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
  return s?.value ?? 0;
}
