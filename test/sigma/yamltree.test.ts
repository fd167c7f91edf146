import { readFileSync } from 'fs';
import { parseYaml, parseYamlFast, parseYamlFull, resolvePlain, toJS, type YNode } from '../../sigma/yamltree';
import { corpusFiles } from './support/corpus';

/** Every node's offset and style, so the comparison covers positions, not only values. */
function shape(n: YNode | null, path = '', out: string[] = []): string[] {
  if (!n) return out;
  out.push(`${path}@${n.offset}`);
  if (n.kind === 'map') for (const p of n.pairs) shape(p.value, `${path}.${p.key}#${p.keyOffset}`, out);
  else if (n.kind === 'seq') n.items.forEach((x, i) => shape(x, `${path}[${i}]`, out));
  else out.push(`${path}:${n.style}`);
  return out;
}

function same(text: string): void {
  const fast = parseYamlFast(text);
  expect(fast).toBeDefined();
  const full = parseYamlFull(text);
  expect(fast!.documents.map((d) => toJS(d.root))).toEqual(full.documents.map((d) => toJS(d.root)));
  expect(fast!.documents.map((d) => shape(d.root))).toEqual(full.documents.map((d) => shape(d.root)));
}

describe('fast YAML subset parser', () => {
  it('agrees with the yaml library on every corpus file it accepts, values and offsets', () => {
    let fast = 0;
    for (const f of corpusFiles()) {
      const text = readFileSync(f, 'utf8');
      if (parseYamlFast(text)) {
        fast++;
        same(text);
      }
    }
    expect(fast).toBeGreaterThan(400);
  });

  it('agrees with the yaml library on CRLF line endings', () => {
    for (const f of corpusFiles().slice(0, 60)) {
      const text = readFileSync(f, 'utf8').replace(/\n/g, '\r\n');
      if (parseYamlFast(text)) same(text);
    }
  });

  it.each([
    ['block scalars', 'a: |\n    line1\n    # not a comment\n\n    line3\nb: >-\n    folded\n    text\nc: |+\n    keep\n\nd: x\n'],
    ['flow collections', 'a: [1, \'two\', "th\\"ree", 4.5, null, true]\nb: {gt: 10, field: x}\nc: []\n'],
    ['quoted escapes', "a: 'it''s'\nb: \"tab\\tnew\\nline \\x41 \\u00e9\"\n"],
    ['compact sequences of maps', 'sel:\n    - a: 1\n      b: 2\n    - c: 3\nlist:\n- x\n- y\n'],
    ['multi-line plain scalars', 'description: first line\n    second line\n\n    after blank\nnext: 1\n'],
    ['core schema scalars', 'a: 0x1F\nb: 0o17\nc: -12\nd: 1e3\ne: ~\nf: TRUE\ng: 2024-01-02\nh: .inf\ni: 1.2.3\n'],
    ['comments and documents', '# head\na: 1 # trailing\n---\nb: "x # y"\n...\n'],
    ['empty sequence items', 'refs:\n    -\n    - a\n    - \nk:   \n'],
    ['windows paths and urls', "p: C:\\Windows\\System32\\cmd.exe\nu: https://example.com/a#frag\nk: 'C:\\x\\'\n"],
  ])('matches the yaml library on %s', (_name, text) => same(text));

  it.each([
    ['anchors', 'a: &x 1\nb: *x\n'],
    ['tags', 'a: !!str 1\n'],
    ['duplicate keys', 'a: 1\na: 2\n'],
    ['multi-line quoted', "a: 'one\n    two'\n"],
    ['tab indentation', 'a:\n\tb: 1\n'],
    ['bad indentation', 'a: 1\n  b: 2\n'],
    ['a sequence on the key line', 'tags:    - a\n'],
    ['a comment glued to a quoted value', "a: 'x'#c\n"],
    ['plain scalars starting with an indicator', 'a: ]x\n'],
  ])('falls back to the yaml library for %s', (_name, text) => {
    expect(parseYamlFast(text)).toBeUndefined();
    expect(parseYaml(text).producer).toBe('yaml');
  });

  it('never disagrees with the yaml library on mutated corpus files (differential fuzz)', () => {
    let seed = 20260801;
    const rnd = (): number => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const texts = corpusFiles().map((f) => readFileSync(f, 'utf8'));
    const alphabet = [' ', ':', '-', "'", '"', '|', '>', '*', '\\', '\n', '#', '[', ']', '{', '}', ',', 'a', '0', '?', '&', '!'];
    let accepted = 0;
    for (let n = 0; n < 3000; n++) {
      let t = texts[Math.floor(rnd() * texts.length)]!;
      const lines = t.split('\n');
      const li = Math.floor(rnd() * lines.length);
      if (rnd() < 0.3) lines[li] = `  ${lines[li]}`;
      else if (rnd() < 0.3) lines.splice(li, 0, lines[li]!);
      t = lines.join('\n');
      const p = Math.floor(rnd() * t.length);
      t = t.slice(0, p) + alphabet[Math.floor(rnd() * alphabet.length)]! + t.slice(p + (rnd() < 0.5 ? 1 : 0));
      const fast = parseYamlFast(t);
      if (!fast) continue;
      accepted++;
      const full = parseYamlFull(t);
      expect(full.documents.flatMap((d) => d.problems)).toEqual([]);
      expect(fast.documents.map((d) => shape(d.root))).toEqual(full.documents.map((d) => shape(d.root)));
      expect(fast.documents.map((d) => toJS(d.root))).toEqual(full.documents.map((d) => toJS(d.root)));
    }
    expect(accepted).toBeGreaterThan(1000);
  });

  it('resolves plain scalars like YAML 1.2 core', () => {
    expect([resolvePlain('4688'), resolvePlain('null'), resolvePlain('false'), resolvePlain('2024-01-02'), resolvePlain('0x10')]).toEqual([
      4688,
      null,
      false,
      '2024-01-02',
      16,
    ]);
  });
});
