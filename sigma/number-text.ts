/**
 * How a Sigma number compares with an event value (docs/decisions, "numbers"): as decimal text.
 * `EventID: 4688` matches the JSON number 4688 and the string "4688", never "04688", " 4688",
 * "+4688", "4688.0", "0x1250" or "4.688e3"; integers compare digit for digit at any size.
 */

/** A JS number as decimal text: an integer's exact digits (no exponent below 1e21), else the shortest round-trip form. */
export function numberText(n: number): string {
  if (Number.isInteger(n) && Math.abs(n) < 1e21) return BigInt(n).toString();
  return String(n);
}

/** A YAML integer as written (decimal, `0x…`, `0o…`), which numbers beyond 2^53 need to stay exact. */
const WRITTEN_INTEGER = /^([-+]?)(0x[0-9a-fA-F]+|0o[0-7]+|[0-9]+)(?=[\s,\]}#]|$)/;

/** The exact decimal text of a plain YAML number whose source starts `written`, given its parsed value. */
export function writtenNumberText(written: string, value: number): string {
  const m = WRITTEN_INTEGER.exec(written);
  if (!m) return numberText(value);
  const digits = BigInt(m[2]!);
  return (m[1] === '-' ? -digits : digits).toString();
}

/**
 * Text that reads as a number for the comparison modifiers (`gt`, `lte`…): an optional sign, decimal
 * digits with an optional fraction and exponent. No spaces, hex, `_`, `inf` or `nan`: DuckDB's
 * TRY_CAST would take some of them and JavaScript's Number() others.
 */
export const DECIMAL_NUMBER = '[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)?';
const DECIMAL_RE = new RegExp(`^${DECIMAL_NUMBER}$`);

/** An event value as a number for the comparison modifiers, NaN when it is none. */
export function comparableNumber(raw: unknown): number {
  if (typeof raw === 'number') return raw;
  if (typeof raw === 'bigint') return Number(raw);
  if (typeof raw === 'string' && DECIMAL_RE.test(raw)) return Number(raw);
  return NaN;
}
