import { SigmaError } from '../../sigma/errors';
import { MODIFIERS, applyModifiers, type RawScalar } from '../../sigma/modifiers';
import type { SigmaValue } from '../../sigma/model';
import { ANY, ONE } from '../../sigma/string';
import { matcher } from './support/rules';

const at = { line: 3, column: 5 };
const apply = (chain: string[], values: RawScalar[], field: string | null = 'F') => applyModifiers(chain, values, field, at);
const one = (chain: string[], value: RawScalar): SigmaValue => apply(chain, [value]).values[0]!;
const strings = (v: SigmaValue): string[] =>
  v.kind === 'expansion' ? v.values.flatMap(strings) : v.kind === 'string' ? [v.parts.map((p) => (typeof p === 'string' ? p : p.wildcard)).join('')] : [];

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof SigmaError) return e.code;
    throw e;
  }
  return 'no error';
}

describe('modifier registry', () => {
  it('registers every spec v2.1 / pySigma 1.5 modifier by name', () => {
    const expected = [
      'contains',
      'startswith',
      'endswith',
      'all',
      'exists',
      'cased',
      'neq',
      'windash',
      're',
      'i',
      'ignorecase',
      'm',
      'multiline',
      's',
      'dotall',
      'base64',
      'base64offset',
      'wide',
      'utf16le',
      'utf16be',
      'utf16',
      'cidr',
      'gt',
      'gte',
      'lt',
      'lte',
      'minute',
      'hour',
      'day',
      'week',
      'month',
      'year',
      'expand',
      'fieldref',
    ];
    for (const name of expected) expect(MODIFIERS.has(name)).toBe(true);
  });

  it('rejects an unknown modifier with its position', () => {
    try {
      apply(['contians'], ['x']);
      throw new Error('unreachable');
    } catch (e) {
      expect(e).toBeInstanceOf(SigmaError);
      expect((e as SigmaError).code).toBe('modifier-unknown');
      expect((e as SigmaError).line).toBe(3);
    }
  });
});

describe('string modifiers', () => {
  it('contains wraps in * only where missing', () => {
    expect(one(['contains'], 'abc')).toMatchObject({ parts: [ANY, 'abc', ANY] });
    expect(one(['contains'], '*abc')).toMatchObject({ parts: [ANY, 'abc', ANY] });
  });
  it('startswith appends *', () => expect(one(['startswith'], 'abc')).toMatchObject({ parts: ['abc', ANY] }));
  it('endswith prepends *', () => expect(one(['endswith'], 'abc')).toMatchObject({ parts: [ANY, 'abc'] }));
  it('contains keeps inner wildcards', () => expect(one(['contains'], 'a?c')).toMatchObject({ parts: [ANY, 'a', ONE, 'c', ANY] }));
  it('turns numbers into strings for string modifiers', () => expect(one(['contains'], 44)).toMatchObject({ kind: 'string', parts: [ANY, '44', ANY] }));
  it('contains after re adds .* unless anchored', () => {
    expect(one(['re', 'contains'], 'a+b')).toMatchObject({ kind: 'regex', pattern: '.*a+b.*' });
    expect(one(['re', 'contains'], '^a+b$')).toMatchObject({ pattern: '^a+b$' });
  });
  it('startswith/endswith on a regex', () => {
    expect(one(['re', 'startswith'], 'ab')).toMatchObject({ pattern: 'ab.*' });
    expect(one(['re', 'endswith'], 'ab')).toMatchObject({ pattern: '.*ab' });
  });
});

describe('item-level modifiers', () => {
  it('all switches linking to AND', () => expect(apply(['contains', 'all'], ['a', 'b']).linking).toBe('and'));
  it('neq negates the item', () => expect(apply(['neq'], ['a']).negated).toBe(true));
  it('cased marks strings case-sensitive', () => expect(one(['cased'], 'Ab')).toMatchObject({ cased: true }));
});

describe('exists', () => {
  it('needs a boolean', () => {
    expect(one(['exists'], true)).toEqual({ kind: 'exists', value: true });
    expect(codeOf(() => one(['exists'], 'yes'))).toBe('modifier-value-type');
  });
  it('must stand alone and needs a field', () => {
    expect(codeOf(() => apply(['exists', 'cased'], [true]))).toBe('modifier-invalid');
    expect(codeOf(() => apply(['contains', 'exists'], [true]))).toBe('modifier-invalid');
    expect(codeOf(() => apply(['exists'], [true], null))).toBe('modifier-invalid');
  });
});

describe('windash', () => {
  it('expands each -flag / /flag to the five dash characters', () => {
    expect(strings(one(['windash'], ' -exec'))).toEqual([' -exec', ' /exec', ' \u2013exec', ' \u2014exec', ' \u2015exec']);
  });
  it('builds the cartesian product over several positions', () => {
    expect(strings(one(['contains', 'windash'], '-a -b'))).toHaveLength(25);
  });
  it('leaves dashes inside words alone', () => {
    expect(strings(one(['windash'], 'foo-bar'))).toEqual(['foo-bar']);
  });
});

describe('regex modifiers', () => {
  it('re keeps the pattern verbatim', () => expect(one(['re'], 'a\\d+.*?\\*')).toMatchObject({ kind: 'regex', pattern: 'a\\d+.*?\\*' }));
  it('re must be first', () => expect(codeOf(() => one(['contains', 're'], 'a'))).toBe('modifier-invalid'));
  it('rejects patterns that do not compile', () => expect(codeOf(() => one(['re'], 'a(b'))).toBe('regex-invalid'));
  it('i/m/s set flags, also by long names', () => {
    expect(one(['re', 'i', 'm', 's'], 'x')).toMatchObject({ ignoreCase: true, multiline: true, dotAll: true });
    expect(one(['re', 'ignorecase', 'multiline', 'dotall'], 'x')).toMatchObject({ ignoreCase: true, multiline: true, dotAll: true });
  });
  it('regex flags need re', () => expect(codeOf(() => one(['i'], 'x'))).toBe('modifier-invalid'));
  it('reads a leading (?i) as the i flag', () => expect(one(['re'], '(?i)abc')).toMatchObject({ ignoreCase: true }));
});

describe('encoding modifiers', () => {
  it('base64 encodes UTF-8', () => expect(strings(one(['base64'], 'ping'))).toEqual(['cGluZw==']));
  it('base64 rejects wildcards', () => expect(codeOf(() => one(['base64'], 'pi*ng'))).toBe('modifier-value-type'));
  it('base64offset yields the three offsets (pySigma vectors)', () => {
    expect(strings(one(['base64offset', 'contains'], 'foobar'))).toEqual(['*Zm9vYmFy*', '*Zvb2Jhc*', '*mb29iYX*']);
  });
  it('wide/utf16le encode UTF-16LE', () => {
    expect(strings(one(['wide'], 'ab'))).toEqual(['a\u0000b\u0000']);
    expect(strings(one(['utf16le'], 'ab'))).toEqual(['a\u0000b\u0000']);
  });
  it('utf16be and utf16 (with BOM)', () => {
    expect(strings(one(['utf16be'], 'ab'))).toEqual(['\u0000a\u0000b']);
    expect(strings(one(['utf16'], 'ab'))).toEqual(['\u00ff\u00fea\u0000b\u0000']);
  });
  it('wide|base64 encodes the UTF-16 bytes, not their UTF-8 form', () => {
    expect(strings(one(['wide', 'base64'], 'ping'))).toEqual([Buffer.from('ping', 'utf16le').toString('base64')]);
  });
});

describe('typed modifiers', () => {
  it('cidr parses IPv4 and IPv6 networks', () => {
    expect(one(['cidr'], '10.0.0.0/8')).toMatchObject({ kind: 'cidr', version: 4, prefix: 8 });
    expect(one(['cidr'], 'fe80::/10')).toMatchObject({ kind: 'cidr', version: 6, prefix: 10 });
    expect(codeOf(() => one(['cidr'], '10.0.0.0/33'))).toBe('modifier-value-type');
    expect(codeOf(() => one(['cidr'], 'nope'))).toBe('modifier-value-type');
  });
  it('gt/gte/lt/lte need a number, not a quoted one', () => {
    expect(one(['gte'], 5)).toEqual({ kind: 'compare', op: 'gte', value: 5 });
    for (const op of ['gt', 'lt', 'lte']) expect(one([op], 1)).toMatchObject({ op });
    expect(codeOf(() => one(['gt'], '5'))).toBe('modifier-value-type');
  });
  it('time parts compare with equality or a following comparison', () => {
    expect(one(['hour'], 3)).toEqual({ kind: 'timepart', part: 'hour', op: 'eq', value: 3 });
    expect(one(['hour', 'gte'], 20)).toMatchObject({ op: 'gte' });
    for (const p of ['minute', 'day', 'week', 'month', 'year']) expect(one([p], 1)).toMatchObject({ part: p });
  });
  it('expand keeps %placeholders% and needs one', () => {
    expect(one(['expand'], '%Admins%')).toMatchObject({ kind: 'placeholder', parts: [{ placeholder: 'Admins' }] });
    expect(one(['contains', 'expand'], '%X%')).toMatchObject({ parts: [ANY, { placeholder: 'X' }, ANY] });
    expect(codeOf(() => one(['expand'], 'none'))).toBe('modifier-invalid');
  });
  it('fieldref names a field and combines with contains', () => {
    expect(one(['fieldref'], 'Other')).toEqual({ kind: 'fieldref', field: 'Other', match: 'equals', cased: false });
    expect(one(['fieldref', 'endswith'], 'Other')).toMatchObject({ match: 'endswith' });
    expect(codeOf(() => one(['fieldref'], 'Oth*'))).toBe('modifier-value-type');
  });
  it('null cannot take value modifiers', () => expect(codeOf(() => one(['contains'], null))).toBe('modifier-value-type'));
});

describe('modifiers end to end through the evaluator', () => {
  const cases: Array<[string, string, Record<string, unknown>, boolean]> = [
    ['contains', "F|contains: 'mimi'", { F: 'xxMIMIkatz' }, true],
    ['startswith', "F|startswith: 'C:\\Win'", { F: 'c:\\windows\\x' }, true],
    ['endswith', "F|endswith: '\\cmd.exe'", { F: 'C:\\x\\CMD.EXE' }, true],
    ['endswith miss', "F|endswith: '\\cmd.exe'", { F: 'C:\\x\\cmd.exe.bak' }, false],
    ['all', "F|contains|all: ['a1', 'b2']", { F: 'b2 a1' }, true],
    ['all miss', "F|contains|all: ['a1', 'b2']", { F: 'a1' }, false],
    ['cased', "F|cased: 'Ab'", { F: 'ab' }, false],
    ['cased hit', "F|cased: 'Ab'", { F: 'Ab' }, true],
    ['neq', "F|neq: 'x'", { F: 'y' }, true],
    ['neq miss', "F|neq: ['x', 'y']", { F: 'Y' }, false],
    ['exists true', 'F|exists: true', { F: '' }, true],
    ['exists false', 'F|exists: false', { G: 1 }, true],
    ['windash', "F|contains|windash: ' -enc '", { F: 'powershell /enc abc' }, true],
    ['windash em dash', "F|contains|windash: ' -enc '", { F: 'powershell \u2014enc abc' }, true],
    ['re', "F|re: '^a\\d+$'", { F: 'a123' }, true],
    ['re case-sensitive', "F|re: '^abc$'", { F: 'ABC' }, false],
    ['re|i', "F|re|i: '^abc$'", { F: 'ABC' }, true],
    ['re|m', "F|re|m: '^b$'", { F: 'a\nb\nc' }, true],
    ['re|s', "F|re|s: 'a.b'", { F: 'a\nb' }, true],
    ['re without s', "F|re: 'a.b'", { F: 'a\nb' }, false],
    ['base64|contains', "F|base64|contains: 'ping'", { F: 'xxcGluZw==' }, true],
    ['base64offset', "F|base64offset|contains: 'http://'", { F: Buffer.from('curl http://x').toString('base64') }, true],
    ['wide|base64offset', "F|wide|base64offset|contains: 'ping'", { F: Buffer.from('x ping', 'utf16le').toString('base64') }, true],
    ['cidr v4', "F|cidr: '192.168.0.0/16'", { F: '192.168.4.5' }, true],
    ['cidr v4 miss', "F|cidr: '192.168.0.0/16'", { F: '192.169.4.5' }, false],
    ['cidr v6', "F|cidr: 'fe80::/10'", { F: 'FE80::1' }, true],
    ['gt', 'F|gt: 10', { F: '11' }, true],
    ['gte', 'F|gte: 10', { F: 10 }, true],
    ['lt', 'F|lt: 10', { F: 10 }, false],
    ['lte', 'F|lte: 10', { F: 10 }, true],
    ['hour', 'F|hour: 5', { F: '2026-04-17T05:24:53Z' }, true],
    ['hour|gte', 'F|hour|gte: 20', { F: '2026-04-17 21:00:00.000' }, true],
    ['month', 'F|month: 4', { F: '2026-04-17T05:24:53Z' }, true],
    ['year', 'F|year: 2025', { F: '2026-04-17T05:24:53Z' }, false],
    ['day', 'F|day: 17', { F: '2026-04-17T05:24:53Z' }, true],
    ['minute', 'F|minute: 24', { F: '2026-04-17T05:24:53Z' }, true],
    ['week', 'F|week: 16', { F: '2026-04-17T05:24:53Z' }, true],
    ['fieldref', 'F|fieldref: G', { F: 'Same', G: 'same' }, true],
    ['fieldref miss', 'F|fieldref: G', { F: 'a', G: 'b' }, false],
    ['fieldref|contains', 'F|fieldref|contains: G', { F: 'xxabxx', G: 'ab' }, true],
    ['fieldref|neq', 'F|fieldref|neq: G', { F: 'a', G: 'b' }, true],
    ['utf16le', "F|utf16le|base64|contains: 'ab'", { F: Buffer.from('ab', 'utf16le').toString('base64') }, true],
  ];
  it.each(cases)('%s', (_name, item, event, expected) => {
    expect(matcher(`    sel:\n        ${item}\n    condition: sel`)(event)).toBe(expected);
  });

  it('expand resolves placeholders from options and rejects unknown ones', () => {
    const det = "    sel:\n        User|expand: '%Admins%'\n    condition: sel";
    const m = matcher(det, { placeholders: { Admins: ['root', 'adm_*'] } });
    expect(m({ User: 'ADM_bob' })).toBe(true);
    expect(m({ User: 'bob' })).toBe(false);
    expect(() => matcher(det)).toThrow(/placeholder %Admins%/);
  });
});
