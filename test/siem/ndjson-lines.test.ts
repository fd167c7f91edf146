import { ndjsonLines, type InvalidUtf8Line, type OversizedLine, type SourceLine } from '../../siem/local/sources';

type Out = SourceLine | OversizedLine | InvalidUtf8Line;

async function collect(input: string | AsyncIterable<string | Uint8Array>, maxLineBytes?: number): Promise<Out[]> {
  const out: Out[] = [];
  for await (const l of ndjsonLines(input, maxLineBytes)) out.push(l);
  return out;
}

async function* bytesIn(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text, 'utf8');
  for (let i = 0; i < bytes.length; i += size) yield new Uint8Array(bytes.subarray(i, i + size));
}

/** Characters String.prototype.indexOf examines while searching for a newline during `fn`. */
async function newlineSearchWork(fn: () => Promise<unknown>): Promise<number> {
  const original = String.prototype.indexOf;
  let examined = 0;
  String.prototype.indexOf = function (this: string, search: string, from?: number) {
    const at = original.call(this, search, from);
    if (search === '\n') examined += (at < 0 ? this.length : at + 1) - Math.max(0, from ?? 0);
    return at;
  };
  try {
    await fn();
  } finally {
    String.prototype.indexOf = original;
  }
  return examined;
}

/** One line of `bytes` bytes without a newline, in chunks of `chunk` bytes, then a newline and a short event. */
async function* runaway(bytes: number, chunk: number, pulled?: { bytes: number }): AsyncGenerator<Uint8Array> {
  const piece = new Uint8Array(Buffer.alloc(chunk, 'a'));
  for (let sent = 0; sent < bytes; sent += chunk) {
    if (pulled) pulled.bytes += chunk;
    yield piece;
  }
  yield new Uint8Array(Buffer.from('\n{"after":true}\n'));
}

describe('ndjsonLines', () => {
  it('splits lines across chunks (multi-byte characters cut in two), skips blank lines, strips CR, keeps a last line without newline', async () => {
    const text = '{"a":"Zoë"}\r\n\n  \n{"b":"日本😀"}\n{"c":1}';
    const expected = [
      { line: 1, text: '{"a":"Zoë"}' },
      { line: 4, text: '{"b":"日本😀"}' },
      { line: 5, text: '{"c":1}' },
    ];
    expect(await collect(text)).toEqual(expected);
    for (const size of [1, 2, 3, 5, 64]) expect(await collect(bytesIn(text, size))).toEqual(expected);
  });

  it('rejects a line over the cap by its number, counted in UTF-8 bytes, and keeps the lines around it', async () => {
    const cap = 16;
    const exactly = `"${'é'.repeat(7)}"`; // 16 bytes, 9 characters
    const over = `"${'é'.repeat(7)}x"`; // 17 bytes, 10 characters
    const text = [exactly, over, '"ok"', 'y'.repeat(100), '"last"'].join('\n');
    const expected = [
      { line: 1, text: exactly },
      { line: 2, oversized: true },
      { line: 3, text: '"ok"' },
      { line: 4, oversized: true },
      { line: 5, text: '"last"' },
    ];
    expect(await collect(text, cap)).toEqual(expected);
    for (const size of [1, 3, 7, 1024]) expect(await collect(bytesIn(text, size), cap)).toEqual(expected);
    // A last line over the cap, without a newline.
    expect(await collect(bytesIn('"a"\n' + 'z'.repeat(40), 5), cap)).toEqual([
      { line: 1, text: '"a"' },
      { line: 2, oversized: true },
    ]);
  });

  it('reports a runaway line as soon as it goes over the cap, and reads the rest of it without keeping it', async () => {
    const cap = 64 * 1024;
    const chunk = 4096;
    const pulled = { bytes: 0 };
    const lines = ndjsonLines(runaway(32 * 1024 * 1024, chunk, pulled), cap);
    const first = await lines.next();
    expect(first.value).toEqual({ line: 1, oversized: true });
    // Reported once the line held more than the cap: not one chunk more was read.
    expect(pulled.bytes).toBe(cap + chunk);
    const rest: Out[] = [];
    for await (const l of lines) rest.push(l);
    expect(rest).toEqual([{ line: 2, text: '{"after":true}' }]);
  });

  it('searches each chunk for newlines once: the work grows with the input, not with its square', async () => {
    // A 1 MiB and a 4 MiB line without a newline, in 4 KiB chunks, under a cap above both: the
    // former code searched the whole pending text again at every chunk (quadratic).
    const work = async (bytes: number) => {
      let lines: Out[] = [];
      const examined = await newlineSearchWork(async () => {
        lines = await collect(runaway(bytes, 4096), 16 * 1024 * 1024);
      });
      expect(lines.map((l) => l.line)).toEqual([1, 2]);
      expect((lines[0] as SourceLine).text).toHaveLength(bytes);
      return examined;
    };
    const small = await work(1024 * 1024);
    const large = await work(4 * 1024 * 1024);
    // Every character is examined once (the newline search of each chunk starts where the last
    // line ended), a few more for the trailing event.
    expect(small).toBeLessThanOrEqual(1024 * 1024 + 64);
    expect(large).toBeLessThanOrEqual(4 * 1024 * 1024 + 64);
    expect(large / small).toBeLessThan(4.1);
  });

  it('treats a string input as one chunk, with the same cap', async () => {
    const big = `{"x":"${'q'.repeat(2000)}"}`;
    expect(await collect(['{"a":1}', big, '{"b":2}'].join('\n'), 1000)).toEqual([
      { line: 1, text: '{"a":1}' },
      { line: 2, oversized: true },
      { line: 3, text: '{"b":2}' },
    ]);
  });

  it('rejects a line whose bytes are not UTF-8 by its number, keeping the lines around it, at any chunk size', async () => {
    const parts = [
      Buffer.from('{"a":"Zoë"}\n'),
      Buffer.from([0x7b, 0x22, 0x62, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x0a]), // {"b":"\xff\xfe"}
      Buffer.from('{"c":"日本"}\n'),
      Buffer.from([0x7b, 0x22, 0x64, 0x22, 0x3a, 0x22, 0xc3, 0x22, 0x7d, 0x0a]), // a lead byte without its continuation
      Buffer.from('{"e":"\uFFFD is a real character"}\n'),
      Buffer.from([0x7b, 0x22, 0x66, 0x22, 0x3a, 0x22, 0xe6, 0x97]), // the input ends inside a character
    ];
    const bytes = Buffer.concat(parts);
    const expected = [
      { line: 1, text: '{"a":"Zoë"}' },
      { line: 2, invalidUtf8: true },
      { line: 3, text: '{"c":"日本"}' },
      { line: 4, invalidUtf8: true },
      { line: 5, text: '{"e":"\uFFFD is a real character"}' },
      { line: 6, invalidUtf8: true },
    ];
    for (const size of [1, 2, 3, 5, 7, 64, bytes.length]) {
      const chunks = async function* () {
        for (let i = 0; i < bytes.length; i += size) yield new Uint8Array(bytes.subarray(i, i + size));
      };
      expect(await collect(chunks())).toEqual(expected);
    }
  });

  it('reads a line that is not UTF-8 and over the cap as oversized, and the next line as itself', async () => {
    const bytes = Buffer.concat([Buffer.from('{"x":"'), Buffer.alloc(40, 0xff), Buffer.from('"}\n{"ok":1}\n')]);
    expect(
      await collect(
        (async function* () {
          yield new Uint8Array(bytes);
        })(),
        16,
      ),
    ).toEqual([
      { line: 1, oversized: true },
      { line: 2, text: '{"ok":1}' },
    ]);
  });
});
