import { matchLogsource, type Logsource, type Pipeline } from '../../sigma';
import type { FixtureCase, RuleLogsource } from '../adapter';
import { kqlLiteral } from './log-analytics';

/**
 * A rule's fixtures as a KQL `datatable` the rule's own query runs over, so a rule test exercises
 * the exact query Sentinel would run, on the fixtures alone:
 *
 *     let T = datatable(FolderPath:string, ..., detflow_fixture:long)[ ... ];
 *     T | where <the rule's condition> | project detflow_fixture
 *
 * Fixture events are written in Sigma's field names; they are renamed with the same
 * pipeline mapping the query was compiled with (the rule's logsource chooses the table's mapping).
 * Every column the query names exists in the table (an empty string where a fixture lacks it), as
 * in a workspace table, where a string column is never null.
 */

export const FIXTURE_COLUMN = 'detflow_fixture';

type ColumnType = 'string' | 'long' | 'real' | 'bool';

/** The table a compiled query reads (`DeviceProcessEvents | where ...`). */
export function queryTable(query: string): { table: string; rest: string } | null {
  const m = /^\s*([A-Za-z_][A-Za-z0-9_]*)(\s*\|[\s\S]*)$/.exec(query);
  return m ? { table: m[1]!, rest: m[2]! } : null;
}

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;
const column = (name: string) => (IDENT.test(name) ? name : `['${name.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}']`);

/** Column names the query compares or tests (string literals removed first, so their text never counts). */
export function referencedColumns(query: string): string[] {
  const names = new Set<string>();
  const bracketed = /\['((?:[^'\\]|\\.)*)'\]/g;
  for (const m of query.matchAll(bracketed)) names.add(m[1]!.replace(/\\(.)/g, '$1'));
  const bare = query.replace(/@"(?:[^"]|"")*"|@'(?:[^']|'')*'|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, ' ');
  const operand =
    /(?<![\w.])([A-Za-z_][A-Za-z0-9_]*)\s*(?:==|!=|=~|!~|<=|>=|<|>|!?contains(?:_cs)?\b|!?startswith(?:_cs)?\b|!?endswith(?:_cs)?\b|!?has(?:_cs)?\b|!?in~?\s*\(|matches\s+regex\b)/g;
  for (const m of bare.matchAll(operand)) names.add(m[1]!);
  for (const m of bare.matchAll(/\b(?:isnull|isnotnull|isempty|isnotempty|tolower|toupper|strlen|tostring)\(\s*([A-Za-z_][A-Za-z0-9_]*)\s*\)/g)) names.add(m[1]!);
  return [...names];
}

function typeOf(values: readonly unknown[]): ColumnType {
  const present = values.filter((v) => v !== undefined && v !== null);
  if (present.length === 0) return 'string';
  if (present.every((v) => typeof v === 'boolean')) return 'bool';
  if (present.every((v) => typeof v === 'number' && Number.isFinite(v))) return present.every((v) => Number.isInteger(v)) ? 'long' : 'real';
  return 'string';
}

function literal(value: unknown, type: ColumnType): string {
  if (value === undefined || value === null) return type === 'string' ? '""' : `${type}(null)`;
  if (type === 'string') return kqlLiteral(typeof value === 'object' ? JSON.stringify(value) : String(value));
  return String(value);
}

/**
 * The fixture query, or why the rule's query cannot run on a fixture table. The fixture's own
 * position (1-based) is in the `detflow_fixture` column of each matched row.
 */
export function fixtureQuery(
  query: string,
  logsource: RuleLogsource | undefined,
  fixtures: readonly FixtureCase[],
  pipeline: Pipeline,
): { ok: true; query: string } | { ok: false; reason: string } {
  const split = queryTable(query);
  if (!split) return { ok: false, reason: 'the query does not start with a table name, so it cannot be pointed at the fixtures' };
  const mapping = matchLogsource({ ...(logsource ?? {}), custom: {}, pos: { line: 0, column: 0 } } as Logsource, pipeline);
  const unmapped = mapping?.unmapped ?? pipeline.unmapped;
  const rename = (field: string): string | undefined => mapping?.fields?.[field] ?? pipeline.fields[field] ?? (unmapped === 'keep' ? field : undefined);

  const events = fixtures.map((f) => {
    const row = new Map<string, unknown>();
    for (const [field, value] of Object.entries(f.event)) {
      const name = rename(field);
      if (name !== undefined && name !== FIXTURE_COLUMN) row.set(name, value);
    }
    return row;
  });
  const names = new Set<string>([...Object.values(mapping?.fields ?? {}), ...referencedColumns(split.rest)]);
  for (const row of events) for (const name of row.keys()) names.add(name);
  names.delete(FIXTURE_COLUMN);
  names.delete('TimeGenerated');
  const columns = [...names].sort().map((name) => ({ name, type: typeOf(events.map((e) => e.get(name))) }));

  const schema = [...columns.map((c) => `${column(c.name)}:${c.type}`), 'TimeGenerated:datetime', `${FIXTURE_COLUMN}:long`].join(', ');
  const now = new Date().toISOString();
  const rows = events.map((row, i) => [...columns.map((c) => literal(row.get(c.name), c.type)), `datetime(${now})`, String(i + 1)].join(', '));
  return {
    ok: true,
    query: `let ${'T'} = datatable(${schema})[\n${rows.join(',\n')}\n];\nT${split.rest}\n| project ${FIXTURE_COLUMN}`,
  };
}
