import { SigmaError, type SourcePosition } from './errors';
import type { ComparisonOp, PlaceholderPart, SigmaValue, StringValue, TimePart } from './model';
import { parseNetwork } from './net';
import { extractInlineFlags, toJsRegExp } from './regex';
import { ANY, endsWithAny, hasWildcards, isWildcard, normaliseParts, parseSigmaString, plainText, startsWithAny, type StringPart } from './string';

/**
 * Value modifiers, looked up by name in one registry. Per-value modifiers transform a work value
 * left to right; item-level ones (`all`, `neq`, `cased`) only set flags on the detection item.
 */

export type RawScalar = string | number | boolean | null;

/** Before the first modifier converts it, a value is still the YAML scalar (re/cidr/... need it raw). */
export type WorkValue = SigmaValue | { readonly kind: 'raw'; readonly value: RawScalar };

export interface ModifierContext {
  readonly name: string;
  readonly index: number;
  readonly chain: readonly string[];
  readonly field: string | null;
  readonly pos: SourcePosition;
  readonly source?: string;
}

export interface ModifierDefinition {
  readonly name: string;
  readonly summary: string;
  readonly category: 'string' | 'encoding' | 'expansion' | 'regex' | 'regex-flag' | 'type' | 'compare' | 'time' | 'item';
  /** Spec: must be the first modifier of the chain. */
  readonly first?: boolean;
  readonly apply?: (value: WorkValue, ctx: ModifierContext) => WorkValue;
}

function fail(ctx: ModifierContext, message: string, code: 'modifier-invalid' | 'modifier-value-type' | 'regex-invalid' = 'modifier-value-type'): never {
  throw new SigmaError(code, `modifier '${ctx.name}': ${message}`, ctx.pos, ctx.source);
}

function scalarToString(value: RawScalar): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** The conversion applied to a value no modifier consumed raw. */
export function rawToValue(value: RawScalar): SigmaValue {
  if (value === null) return { kind: 'null' };
  if (typeof value === 'number') return { kind: 'number', value };
  if (typeof value === 'boolean') return { kind: 'boolean', value };
  return { kind: 'string', parts: normaliseParts(parseSigmaString(value)), cased: false, binary: false };
}

function asString(value: WorkValue, ctx: ModifierContext): StringValue {
  if (value.kind === 'raw') {
    const text = scalarToString(value.value);
    if (text === undefined) fail(ctx, 'null cannot be transformed');
    return rawToValue(text) as StringValue;
  }
  if (value.kind === 'string') return value;
  if (value.kind === 'number' || value.kind === 'boolean') {
    return { kind: 'string', parts: [String(value.value)], cased: false, binary: false };
  }
  return fail(ctx, `expects a string value, got ${value.kind}`);
}

function mapExpansion(value: WorkValue, fn: (v: WorkValue) => WorkValue): WorkValue {
  if (value.kind === 'expansion') return { kind: 'expansion', values: value.values.map((v) => fn(v) as SigmaValue) };
  return fn(value);
}

function withParts(value: StringValue, parts: StringPart[]): StringValue {
  return { ...value, parts: normaliseParts(parts) };
}

function bytesOf(value: StringValue, ctx: ModifierContext): Buffer {
  if (hasWildcards(value.parts)) fail(ctx, 'values with wildcards cannot be encoded');
  const text = plainText(value.parts);
  return value.binary ? Buffer.from(text, 'latin1') : Buffer.from(text, 'utf8');
}

function encodeText(value: WorkValue, ctx: ModifierContext, encode: (text: string) => Buffer, bom?: Buffer): WorkValue {
  return mapExpansion(value, (v) => {
    const s = asString(v, ctx);
    const parts: StringPart[] = s.parts.map((p) => (isWildcard(p) ? p : encode(p).toString('latin1')));
    if (bom) parts.unshift(bom.toString('latin1'));
    return { ...s, parts: normaliseParts(parts), binary: true };
  });
}

function utf16be(text: string): Buffer {
  const le = Buffer.from(text, 'utf16le');
  return le.swap16();
}

const WINDASH_CHARS = ['-', '/', '\u2013', '\u2014', '\u2015'];
const WINDASH_MAX_OCCURRENCES = 6;

function windash(value: StringValue, ctx: ModifierContext): SigmaValue {
  // Positions are computed per text part: a dash next to a wildcard has no known neighbour, and
  // pySigma treats it the same way.
  const variants: StringPart[][] = [[]];
  let occurrences = 0;
  for (const part of value.parts) {
    if (isWildcard(part)) {
      for (const v of variants) v.push(part);
      continue;
    }
    const pieces: string[] = [];
    let last = 0;
    const re = /\B[-/]\b/g;
    for (let m = re.exec(part); m; m = re.exec(part)) {
      pieces.push(part.slice(last, m.index));
      last = m.index + 1;
    }
    pieces.push(part.slice(last));
    occurrences += pieces.length - 1;
    if (occurrences > WINDASH_MAX_OCCURRENCES) fail(ctx, `more than ${WINDASH_MAX_OCCURRENCES} dash positions would expand to too many values`, 'modifier-invalid');
    let texts = [pieces[0]!];
    for (let k = 1; k < pieces.length; k++) {
      const next: string[] = [];
      for (const t of texts) for (const d of WINDASH_CHARS) next.push(t + d + pieces[k]!);
      texts = next;
    }
    const expanded: StringPart[][] = [];
    for (const v of variants) for (const t of texts) expanded.push([...v, t]);
    variants.splice(0, variants.length, ...expanded);
  }
  if (variants.length === 1) return withParts(value, variants[0]!);
  return { kind: 'expansion', values: variants.map((parts) => withParts(value, parts)) };
}

const B64_START = [0, 2, 3];
const B64_END = [undefined, -3, -2];

function base64offset(bytes: Buffer): string[] {
  const out: string[] = [];
  for (let i = 0; i < 3; i++) {
    const encoded = Buffer.concat([Buffer.alloc(i, 0x20), bytes]).toString('base64');
    out.push(encoded.slice(B64_START[i], B64_END[(bytes.length + i) % 3]));
  }
  return out;
}

function regexValue(value: WorkValue, ctx: ModifierContext): WorkValue {
  if (value.kind !== 'raw' || typeof value.value !== 'string') fail(ctx, 'expects a string pattern');
  const pattern = value.value;
  const inline = extractInlineFlags(pattern);
  try {
    toJsRegExp(pattern, { ignoreCase: false, multiline: false, dotAll: false });
  } catch (e) {
    fail(ctx, `invalid regular expression: ${(e as Error).message}`, 'regex-invalid');
  }
  return {
    kind: 'regex',
    pattern,
    ignoreCase: inline.flags.ignoreCase ?? false,
    multiline: inline.flags.multiline ?? false,
    dotAll: inline.flags.dotAll ?? false,
  };
}

function regexFlag(flag: 'ignoreCase' | 'multiline' | 'dotAll') {
  return (value: WorkValue, ctx: ModifierContext): WorkValue => {
    if (value.kind !== 'regex') fail(ctx, 'regex flags are only allowed after `re`', 'modifier-invalid');
    return { ...value, [flag]: true };
  };
}

function wrapRegex(pattern: string, front: boolean, back: boolean): string {
  let p = pattern;
  if (front && !p.startsWith('^') && !p.startsWith('.*')) p = `.*${p}`;
  if (back && !(p.endsWith('$') && !p.endsWith('\\$')) && !p.endsWith('.*')) p = `${p}.*`;
  return p;
}

function stringWrap(front: boolean, back: boolean, match: 'contains' | 'startswith' | 'endswith') {
  return (value: WorkValue, ctx: ModifierContext): WorkValue =>
    mapExpansion(value, (v) => {
      if (v.kind === 'regex') return { ...v, pattern: wrapRegex(v.pattern, front, back) };
      if (v.kind === 'fieldref') {
        if (v.match !== 'equals') fail(ctx, `cannot combine with '${v.match}'`, 'modifier-invalid');
        return { ...v, match };
      }
      if (v.kind === 'placeholder') {
        const parts = [...v.parts];
        const isAny = (p: StringPart | PlaceholderPart | undefined): boolean => typeof p === 'object' && 'wildcard' in p && p.wildcard === '*';
        if (front && !isAny(parts[0])) parts.unshift(ANY);
        if (back && !isAny(parts[parts.length - 1])) parts.push(ANY);
        return { ...v, parts };
      }
      const s = asString(v, ctx);
      const parts = [...s.parts];
      if (front && !startsWithAny(parts)) parts.unshift(ANY);
      if (back && !endsWithAny(parts)) parts.push(ANY);
      return withParts(s, parts);
    });
}

function numberOf(value: WorkValue, ctx: ModifierContext): number {
  if (value.kind === 'raw' && typeof value.value === 'number') return value.value;
  if (value.kind === 'number') return value.value;
  return fail(ctx, 'expects a number (a quoted number is a string)');
}

function comparison(op: ComparisonOp) {
  return (value: WorkValue, ctx: ModifierContext): WorkValue => {
    if (value.kind === 'timepart') {
      if (value.op !== 'eq') fail(ctx, 'only one comparison is allowed', 'modifier-invalid');
      return { ...value, op };
    }
    return { kind: 'compare', op, value: numberOf(value, ctx) };
  };
}

function timePart(part: TimePart) {
  return (value: WorkValue, ctx: ModifierContext): WorkValue => ({ kind: 'timepart', part, op: 'eq', value: numberOf(value, ctx) });
}

function expand(value: WorkValue, ctx: ModifierContext): WorkValue {
  // Works on the parsed string so `contains|expand` keeps the wildcards contains added.
  const s = asString(value, ctx);
  const parts: (StringPart | PlaceholderPart)[] = [];
  for (const part of s.parts) {
    if (isWildcard(part)) {
      parts.push(part);
      continue;
    }
    let last = 0;
    const re = /(\\?)%([A-Za-z0-9_.-]+)%/g;
    for (let m = re.exec(part); m; m = re.exec(part)) {
      if (m[1]) continue;
      parts.push(part.slice(last, m.index).replace(/\\%/g, '%'));
      parts.push({ placeholder: m[2]! });
      last = m.index + m[0].length;
    }
    parts.push(part.slice(last).replace(/\\%/g, '%'));
  }
  if (!parts.some((p) => typeof p === 'object' && 'placeholder' in p)) fail(ctx, 'the value has no %placeholder%', 'modifier-invalid');
  return { kind: 'placeholder', parts: parts.filter((p) => p !== ''), cased: s.cased };
}

const definitions: ModifierDefinition[] = [
  { name: 'contains', category: 'string', summary: 'substring match (*value*)', apply: stringWrap(true, true, 'contains') },
  { name: 'startswith', category: 'string', summary: 'prefix match (value*)', apply: stringWrap(false, true, 'startswith') },
  { name: 'endswith', category: 'string', summary: 'suffix match (*value)', apply: stringWrap(true, false, 'endswith') },
  { name: 'all', category: 'item', summary: 'AND the value list instead of OR' },
  { name: 'neq', category: 'item', summary: 'negate the whole item (pySigma)' },
  { name: 'cased', category: 'item', summary: 'case-sensitive string match' },
  {
    name: 'exists',
    category: 'type',
    first: true,
    summary: 'field presence test (true/false)',
    apply: (v, ctx) => {
      if (ctx.field === null) fail(ctx, 'needs a field', 'modifier-invalid');
      if (v.kind !== 'raw' || typeof v.value !== 'boolean') fail(ctx, 'expects a boolean');
      return { kind: 'exists', value: v.value };
    },
  },
  {
    name: 'windash',
    category: 'expansion',
    summary: 'expand -flag into -,/,en/em/horizontal-bar dash variants',
    apply: (v, ctx) => mapExpansion(v, (x) => windash(asString(x, ctx), ctx)),
  },
  { name: 're', category: 'regex', first: true, summary: 'regular expression (unanchored search)', apply: regexValue },
  { name: 'i', category: 'regex-flag', summary: 'regex: case-insensitive', apply: regexFlag('ignoreCase') },
  { name: 'ignorecase', category: 'regex-flag', summary: 'regex: case-insensitive', apply: regexFlag('ignoreCase') },
  { name: 'm', category: 'regex-flag', summary: 'regex: ^/$ match at line breaks', apply: regexFlag('multiline') },
  { name: 'multiline', category: 'regex-flag', summary: 'regex: ^/$ match at line breaks', apply: regexFlag('multiline') },
  { name: 's', category: 'regex-flag', summary: 'regex: . matches newline', apply: regexFlag('dotAll') },
  { name: 'dotall', category: 'regex-flag', summary: 'regex: . matches newline', apply: regexFlag('dotAll') },
  {
    name: 'base64',
    category: 'encoding',
    summary: 'Base64-encode the value',
    apply: (v, ctx) =>
      mapExpansion(v, (x) => {
        const s = asString(x, ctx);
        return { kind: 'string', parts: [bytesOf(s, ctx).toString('base64')], cased: s.cased, binary: false };
      }),
  },
  {
    name: 'base64offset',
    category: 'expansion',
    summary: 'the three Base64 renderings at byte offsets 0, 1, 2',
    apply: (v, ctx) => {
      if (v.kind === 'expansion') fail(ctx, 'cannot be applied to an expansion', 'modifier-invalid');
      const s = asString(v, ctx);
      return {
        kind: 'expansion',
        values: base64offset(bytesOf(s, ctx)).map((t) => ({ kind: 'string' as const, parts: [t], cased: s.cased, binary: false })),
      };
    },
  },
  { name: 'wide', category: 'encoding', summary: 'UTF-16LE encoding', apply: (v, ctx) => encodeText(v, ctx, (t) => Buffer.from(t, 'utf16le')) },
  { name: 'utf16le', category: 'encoding', summary: 'UTF-16LE encoding', apply: (v, ctx) => encodeText(v, ctx, (t) => Buffer.from(t, 'utf16le')) },
  { name: 'utf16be', category: 'encoding', summary: 'UTF-16BE encoding', apply: (v, ctx) => encodeText(v, ctx, utf16be) },
  {
    name: 'utf16',
    category: 'encoding',
    summary: 'UTF-16LE with a byte-order mark',
    apply: (v, ctx) => encodeText(v, ctx, (t) => Buffer.from(t, 'utf16le'), Buffer.from([0xff, 0xfe])),
  },
  {
    name: 'cidr',
    category: 'type',
    first: true,
    summary: 'IPv4/IPv6 network membership',
    apply: (v, ctx) => {
      if (v.kind !== 'raw' || typeof v.value !== 'string') fail(ctx, 'expects a network string');
      const net = parseNetwork(v.value);
      if (!net) fail(ctx, `'${v.value}' is not a valid IPv4/IPv6 network`);
      return { kind: 'cidr', network: v.value, version: net.version, prefix: net.prefix, address: net.address };
    },
  },
  { name: 'gt', category: 'compare', summary: 'numeric >', apply: comparison('gt') },
  { name: 'gte', category: 'compare', summary: 'numeric >=', apply: comparison('gte') },
  { name: 'lt', category: 'compare', summary: 'numeric <', apply: comparison('lt') },
  { name: 'lte', category: 'compare', summary: 'numeric <=', apply: comparison('lte') },
  { name: 'minute', category: 'time', summary: 'minute of a timestamp field', apply: timePart('minute') },
  { name: 'hour', category: 'time', summary: 'hour of a timestamp field', apply: timePart('hour') },
  { name: 'day', category: 'time', summary: 'day of month of a timestamp field', apply: timePart('day') },
  { name: 'week', category: 'time', summary: 'ISO week of a timestamp field', apply: timePart('week') },
  { name: 'month', category: 'time', summary: 'month of a timestamp field', apply: timePart('month') },
  { name: 'year', category: 'time', summary: 'year of a timestamp field', apply: timePart('year') },
  { name: 'expand', category: 'type', summary: 'resolve %placeholders% from the pipeline', apply: expand },
  {
    name: 'fieldref',
    category: 'type',
    summary: 'compare with the value of another field',
    apply: (v, ctx) => {
      if (v.kind !== 'raw' || typeof v.value !== 'string') fail(ctx, 'expects a field name');
      if (/[*?]/.test(v.value)) fail(ctx, 'wildcards are not allowed in a field reference');
      return { kind: 'fieldref', field: v.value, match: 'equals', cased: false };
    },
  },
];

export const MODIFIERS: ReadonlyMap<string, ModifierDefinition> = new Map(definitions.map((d) => [d.name, d]));

export function getModifier(name: string): ModifierDefinition | undefined {
  return MODIFIERS.get(name);
}

export interface ModifiedItem {
  readonly linking: 'or' | 'and';
  readonly negated: boolean;
  readonly cased: boolean;
  readonly values: SigmaValue[];
}

function applyCased(value: SigmaValue): SigmaValue {
  switch (value.kind) {
    case 'string':
    case 'fieldref':
    case 'placeholder':
      return { ...value, cased: true };
    case 'expansion':
      return { kind: 'expansion', values: value.values.map(applyCased) };
    default:
      return value;
  }
}

/**
 * Validates a modifier chain (unknown names, first-only modifiers, repeats) and applies it to each
 * value. Throws SigmaError with the item's position on the first problem.
 */
export function applyModifiers(
  chain: readonly string[],
  values: readonly RawScalar[],
  field: string | null,
  pos: SourcePosition,
  source?: string,
): ModifiedItem {
  const defs: ModifierDefinition[] = [];
  chain.forEach((name, index) => {
    const def = MODIFIERS.get(name);
    if (!def) throw new SigmaError('modifier-unknown', `unknown modifier '${name}'`, pos, source);
    if (def.first && index !== 0) {
      throw new SigmaError('modifier-invalid', `modifier '${name}' must be the first modifier`, pos, source);
    }
    defs.push(def);
  });
  const names = new Set(chain);
  const linking = names.has('all') ? 'and' : 'or';
  const negated = names.has('neq');
  const cased = names.has('cased');
  if (names.has('exists') && chain.length > 1) {
    throw new SigmaError('modifier-invalid', "'exists' cannot be combined with other modifiers", pos, source);
  }
  const out: SigmaValue[] = [];
  for (const raw of values) {
    let work: WorkValue = { kind: 'raw', value: raw };
    if (raw === null && chain.some((n) => n !== 'all' && n !== 'neq' && n !== 'cased')) {
      throw new SigmaError('modifier-value-type', `null cannot be combined with modifiers (${chain.join('|')})`, pos, source);
    }
    defs.forEach((def, index) => {
      if (def.apply) work = def.apply(work, { name: def.name, index, chain, field, pos, source });
    });
    let value: SigmaValue = work.kind === 'raw' ? rawToValue(work.value) : work;
    if (cased) value = applyCased(value);
    out.push(value);
  }
  return { linking, negated, cased, values: out };
}
