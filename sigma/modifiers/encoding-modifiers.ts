import type { StringValue } from '../model';
import { hasWildcards, isWildcard, normaliseParts, plainText, type StringPart } from '../string';
import type { ModifierContext, WorkValue } from './types';
import { asString, fail, mapExpansion } from './work-values';

/** Byte encodings of a value: UTF-16 variants and Base64 (plain and at the three byte offsets). */

export function bytesOf(value: StringValue, ctx: ModifierContext): Buffer {
  if (hasWildcards(value.parts)) fail(ctx, 'values with wildcards cannot be encoded');
  const text = plainText(value.parts);
  return value.binary ? Buffer.from(text, 'latin1') : Buffer.from(text, 'utf8');
}

export function encodeText(value: WorkValue, ctx: ModifierContext, encode: (text: string) => Buffer, bom?: Buffer): WorkValue {
  return mapExpansion(value, (v) => {
    const s = asString(v, ctx);
    const parts: StringPart[] = s.parts.map((p) => (isWildcard(p) ? p : encode(p).toString('latin1')));
    if (bom) parts.unshift(bom.toString('latin1'));
    return { ...s, parts: normaliseParts(parts), binary: true };
  });
}

export function utf16be(text: string): Buffer {
  const le = Buffer.from(text, 'utf16le');
  return le.swap16();
}

const B64_START = [0, 2, 3];
const B64_END = [undefined, -3, -2];

export function base64offset(bytes: Buffer): string[] {
  const out: string[] = [];
  for (let i = 0; i < 3; i++) {
    const encoded = Buffer.concat([Buffer.alloc(i, 0x20), bytes]).toString('base64');
    out.push(encoded.slice(B64_START[i], B64_END[(bytes.length + i) % 3]));
  }
  return out;
}
