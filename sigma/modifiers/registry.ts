import { parseNetwork } from '../net';
import { comparison, timePart } from './comparison-modifiers';
import { base64offset, bytesOf, encodeText, utf16be } from './encoding-modifiers';
import { regexFlag, regexValue } from './regex-modifiers';
import { expand, stringWrap, windash } from './string-modifiers';
import type { ModifierDefinition } from './types';
import { asString, fail, mapExpansion } from './work-values';

/** Every modifier, by name: what it does, its category, and how it transforms a value. */

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
