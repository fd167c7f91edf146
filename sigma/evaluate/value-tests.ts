import { SigmaError } from '../errors';
import type { CidrValue, CompareValue, DetectionItem, FieldRefValue, PlaceholderValue, RegexValue, SigmaValue, StringValue } from '../model';
import { networkMask, parseIp } from '../net';
import { comparableNumber, numberText } from '../number-text';
import { RegexTranslationError, analyseRegex, isCatastrophic, toJsRegExp } from '../regex';
import { mappedFieldReader } from './field-mapping';
import { resolvePlaceholders } from './placeholders';
import { compileStringSet } from './string-sets';
import { parseTimestamp, timePartOf } from './timestamps';
import type { ItemCompiler, ScalarTest } from './types';

/**
 * The tests one detection item's values run on a single field value: every value kind becomes a
 * scalar test, and an item's OR-list of them is folded into one.
 */

function scalarToText(raw: unknown): string | undefined {
  if (typeof raw === 'string') return raw;
  if (typeof raw === 'number' || typeof raw === 'boolean' || typeof raw === 'bigint') return String(raw);
  return undefined;
}

function compareOp(op: 'gt' | 'gte' | 'lt' | 'lte' | 'eq', a: number, b: number): boolean {
  switch (op) {
    case 'gt':
      return a > b;
    case 'gte':
      return a >= b;
    case 'lt':
      return a < b;
    case 'lte':
      return a <= b;
    case 'eq':
      return a === b;
  }
}

export function compileRegex(value: RegexValue, pos: DetectionItem['pos'], allowUnsafe: boolean): RegExp {
  const issues = analyseRegex(value.pattern);
  if (!allowUnsafe && isCatastrophic(issues)) {
    throw new SigmaError('regex-unsafe', `regex /${value.pattern}/ can backtrack catastrophically: ${issues.map((i) => i.message).join('; ')}`, pos);
  }
  try {
    return toJsRegExp(value.pattern, value);
  } catch (e) {
    if (e instanceof RegexTranslationError) throw new SigmaError('regex-invalid', `regex /${value.pattern}/ cannot be evaluated exactly: ${e.message}`, pos);
    throw new SigmaError('regex-invalid', `invalid regex /${value.pattern}/: ${(e as Error).message}`, pos);
  }
}

function compileCidr(v: CidrValue): ScalarTest {
  const mask = networkMask(v.version, v.prefix);
  return (raw) => {
    if (typeof raw !== 'string') return false;
    const ip = parseIp(raw);
    return ip !== undefined && ip.version === v.version && (ip.value & mask) === v.address;
  };
}

function compileFieldRef(v: FieldRefValue, compiler: ItemCompiler): ScalarTest {
  const other = mappedFieldReader(v.field, compiler.options.fieldMapping);
  return (raw, event) => {
    let a = scalarToText(raw);
    let b = scalarToText(other(event));
    if (a === undefined || b === undefined) return false;
    if (!v.cased) {
      a = a.toLowerCase();
      b = b.toLowerCase();
    }
    switch (v.match) {
      case 'equals':
        return a === b;
      case 'contains':
        return a.includes(b);
      case 'startswith':
        return a.startsWith(b);
      case 'endswith':
        return a.endsWith(b);
    }
  };
}

/**
 * One value (not string: strings are grouped separately) → scalar test.
 */
function compileNonString(value: Exclude<SigmaValue, StringValue | PlaceholderValue | { kind: 'expansion' }>, item: DetectionItem, compiler: ItemCompiler): ScalarTest {
  switch (value.kind) {
    case 'number': {
      // Decimal text, digit for digit: see number-text.ts.
      const text = value.text;
      return (raw) => {
        if (typeof raw === 'string') return raw === text;
        if (typeof raw === 'number') return numberText(raw) === text;
        return typeof raw === 'bigint' && raw.toString() === text;
      };
    }
    case 'boolean': {
      const b = value.value;
      const text = String(b);
      return (raw) => raw === b || (typeof raw === 'string' && raw.toLowerCase() === text);
    }
    case 'null':
      return (raw) => raw === null || raw === undefined;
    case 'regex': {
      const re = compileRegex(value, item.pos, compiler.options.allowUnsafeRegex === true);
      const max = compiler.maxRegexInput;
      return (raw) => {
        const s = scalarToText(raw);
        if (s === undefined) return false;
        re.lastIndex = 0;
        return re.test(s.length > max ? s.slice(0, max) : s);
      };
    }
    case 'cidr':
      return compileCidr(value);
    case 'compare': {
      const c: CompareValue = value;
      return (raw) => compareOp(c.op, comparableNumber(raw), c.value);
    }
    case 'exists':
      // Presence is decided before scalar tests run (see compileFieldItem).
      return () => true;
    case 'fieldref':
      return compileFieldRef(value, compiler);
    case 'timepart': {
      const t = value;
      return (raw) => {
        const d = parseTimestamp(raw);
        return d !== undefined && compareOp(t.op, timePartOf(d, t.part), t.value);
      };
    }
  }
}

/** Compiles a list of values into one OR-ed scalar test, with all plain strings in one fast set. */
export function compileValueGroup(values: readonly SigmaValue[], item: DetectionItem, compiler: ItemCompiler, slot: number | undefined): ScalarTest {
  const strings: StringValue[] = [];
  const others: ScalarTest[] = [];
  const flatten = (v: SigmaValue): void => {
    if (v.kind === 'expansion') v.values.forEach(flatten);
    else if (v.kind === 'string') strings.push(v);
    else if (v.kind === 'placeholder') strings.push(...resolvePlaceholders(v, compiler.options.placeholders, item.pos));
    else others.push(compileNonString(v, item, compiler));
  };
  values.forEach(flatten);
  const tests = [...others];
  if (strings.length > 0) {
    const cased = strings.every((s) => s.cased);
    const set = compileStringSet(strings);
    const cache = compiler.cache;
    if (cased) {
      tests.unshift((raw) => {
        const s = scalarToText(raw);
        return s !== undefined && set(s);
      });
    } else if (slot !== undefined) {
      tests.unshift((raw, _event, element) => {
        if (typeof raw === 'string') return set(element === true ? raw.toLowerCase() : cache.lower(slot, raw));
        const s = scalarToText(raw);
        return s !== undefined && set(s.toLowerCase());
      });
    } else {
      tests.unshift((raw) => {
        const s = scalarToText(raw);
        return s !== undefined && set(s.toLowerCase());
      });
    }
  }
  if (tests.length === 1) return tests[0]!;
  return (raw, event, element) => {
    for (let i = 0; i < tests.length; i++) if (tests[i]!(raw, event, element)) return true;
    return false;
  };
}
