import { mappedFieldNames, type CompileOptions } from '../evaluate';
import type { SigmaValue } from '../model';
import { documentItems } from '../walk';
import type { ResolvedTarget } from './targets';

/**
 * The event fields a test target reads, as event field names (after the evaluator's field mapping).
 * Used to tell fixture fields that cannot influence a verdict, and which differences between two
 * fixtures are only differences of letter case.
 */
export interface FieldsRead {
  /** A keyword search without `keywordFields` reads every leaf of the event. */
  readonly every: boolean;
  readonly names: ReadonlySet<string>;
  /** Fields some item compares case-sensitively (`cased`, a regex without `i`, a cased fieldref). */
  readonly cased: ReadonlySet<string>;
}

/**
 * Fields the correlation engine reads for event time when no timestamp function is given. Mirrors
 * `DEFAULT_TIME_FIELDS` in `sigma/correlation.ts` (not exported there).
 */
export const CORRELATION_TIME_FIELDS: readonly string[] = ['@timestamp', 'timestamp', 'TimeCreated_SystemTime', 'UtcTime', 'time'];

/** True when the value compares letter case as written; `fieldref` also reports the other field. */
function caseSensitive(value: SigmaValue, otherFields: string[]): boolean {
  switch (value.kind) {
    case 'string':
    case 'placeholder':
      return value.cased;
    case 'regex':
      return !value.ignoreCase;
    case 'fieldref':
      if (value.cased) otherFields.push(value.field);
      return value.cased;
    case 'expansion':
      return value.values.some((v) => caseSensitive(v, otherFields));
    default:
      return false;
  }
}

export function fieldsRead(target: ResolvedTarget, options: CompileOptions = {}): FieldsRead {
  const names = new Set<string>();
  const cased = new Set<string>();
  let every = false;
  const add = (field: string, into: Set<string> = names): void => {
    for (const n of mappedFieldNames(field, options.fieldMapping)) into.add(n);
  };
  for (const { rule } of target.rules) {
    for (const { item } of documentItems(rule)) {
      if (item.field === null) {
        if (options.keywordFields) options.keywordFields.forEach((f) => add(f));
        else every = true;
        continue;
      }
      add(item.field);
      const other: string[] = [];
      for (const v of item.values) if (v.kind === 'fieldref') add(v.field);
      if (item.values.some((v) => caseSensitive(v, other))) {
        add(item.field, cased);
        other.forEach((f) => add(f, cased));
      }
    }
  }
  for (const corr of target.correlations) {
    corr.groupBy.forEach((f) => add(f));
    if (corr.condition?.field !== undefined) add(corr.condition.field);
    for (const perRule of Object.values(corr.aliases)) Object.values(perRule).forEach((f) => add(f));
    CORRELATION_TIME_FIELDS.forEach((f) => names.add(f));
  }
  return { every, names, cased };
}

/** Field paths of an event: nested objects are walked (`a.b`), arrays and scalars are leaves. */
export function eventFieldPaths(event: Readonly<Record<string, unknown>>, prefix = '', out: string[] = [], depth = 0): string[] {
  for (const [key, value] of Object.entries(event)) {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    if (depth < 16 && value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0) {
      eventFieldPaths(value as Record<string, unknown>, path, out, depth + 1);
    } else out.push(path);
  }
  return out;
}

/**
 * A fixture field path is read when a rule field names it, names an object it lies in (the rule
 * reads `a`, the fixture has `a.b`), or lies inside it (the rule reads `a.b.c` and the fixture's
 * `a.b` is an array or scalar, so the engine still looks at it).
 */
export function isFieldRead(path: string, read: FieldsRead): boolean {
  if (read.every || read.names.has(path)) return true;
  for (const name of read.names) if (path.startsWith(`${name}.`) || name.startsWith(`${path}.`)) return true;
  return false;
}
