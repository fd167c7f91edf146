import { matchLogsource, type Pipeline } from '../../sigma/pipelines';
import type { RuleLogsource, TimeWindow } from '../adapter';

/**
 * The SPL detflow sends to Splunk, built around the query `compileForTarget(rule, 'splunk')`
 * produced: `<logsource prefix> <condition> [| regex …] [| where …]` (sigma/backends/splunk.ts).
 * Every search is prefixed with the target's index(es): `search index=main …`. Per-day figures
 * bucket events by UTC day with arithmetic on `_time` (`eval detflow_day=floor(_time/86400)`),
 * which, unlike `bin _time span=1d`, does not depend on the Splunk user's time zone.
 */

/** A double-quoted SPL string: backslashes and double quotes escaped, as the Splunk backend quotes values. */
export function quoteSpl(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** A field name as SPL takes it: bare when it is a plain name, else double-quoted. */
export function splField(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(name) ? name : quoteSpl(name);
}

/** `index=main`, or `(index=a OR index=b)` for several. */
export function indexTerm(indexes: readonly string[]): string {
  const terms = indexes.map((i) => `index=${i}`);
  return terms.length === 1 ? terms[0]! : `(${terms.join(' OR ')})`;
}

/** The search a saved search runs for a compiled rule: the rule's query over the target's indexes. */
export function deployedSearch(indexes: readonly string[], query: string): string {
  return `search ${indexTerm(indexes)} ${query}`;
}

/** The compiled query back out of a deployed search, or null when the search no longer starts as detflow wrote it. */
export function queryOfDeployedSearch(indexes: readonly string[], search: string): string | null {
  const head = `search ${indexTerm(indexes)} `;
  return search.startsWith(head) ? search.slice(head.length) : null;
}

/** The search prefix the target's mapping gives a logsource (`tag=process tag=report`, `source="…"`), '' when none. */
export function logsourcePrefix(logsource: RuleLogsource | undefined, pipeline: Pipeline): string {
  const mapping = logsource ? matchLogsource({ ...logsource, custom: {}, pos: { line: 0, column: 0 } }, pipeline) : undefined;
  return mapping?.target ?? pipeline.defaultTarget ?? '';
}

/** The field rename the target's mapping applies to a logsource's Sigma field name (fixtures are mapped with it). */
export function mappedFieldName(logsource: RuleLogsource | undefined, field: string, pipeline: Pipeline): string {
  const mapping = logsource ? matchLogsource({ ...logsource, custom: {}, pos: { line: 0, column: 0 } }, pipeline) : undefined;
  return mapping?.fields?.[field] ?? pipeline.fields[field] ?? field;
}

/** Splits a query at its first pipe outside quotes: the search part and the pipeline after it (`| regex …`). */
export function splitPipeline(query: string): { search: string; pipeline: string } {
  let quoted = false;
  for (let i = 0; i < query.length; i++) {
    const ch = query[i];
    if (ch === '\\' && quoted) {
      i++;
      continue;
    }
    if (ch === '"') quoted = !quoted;
    else if (ch === '|' && !quoted) return { search: query.slice(0, i).trim(), pipeline: query.slice(i).trim() };
  }
  return { search: query.trim(), pipeline: '' };
}

/**
 * The rule's condition without its logsource prefix, with its pipeline: what fixtures are tested
 * against (fixture events carry no CIM tags or source; only the detection logic is under test).
 */
export function conditionOf(query: string, logsource: RuleLogsource | undefined, mapping: Pipeline): string {
  const { search, pipeline } = splitPipeline(query);
  const prefix = logsourcePrefix(logsource, mapping);
  let condition = search;
  if (prefix !== '' && search.startsWith(`${prefix} `)) condition = search.slice(prefix.length + 1);
  else if (prefix !== '' && search === prefix) condition = '*';
  return pipeline === '' ? condition : `${condition} ${pipeline}`;
}

/** Epoch seconds as Splunk's `earliest_time`/`latest_time` take them (milliseconds kept as a fraction). */
export function epochSeconds(at: Date): string {
  const ms = at.getTime();
  return ms % 1000 === 0 ? String(ms / 1000) : (ms / 1000).toFixed(3);
}

export function windowParams(window: TimeWindow): { earliest: string; latest: string } {
  return { earliest: epochSeconds(window.from), latest: epochSeconds(window.to) };
}

/** Per-UTC-day event counts of a search: rows `{detflow_day: <days since epoch>, count}`. */
export function perDaySearch(search: string): string {
  return `${search} | eval detflow_day=floor(_time/86400) | stats count by detflow_day`;
}

/** The events of the target's indexes of a logsource, whatever the rule's condition: what `scanned` counts. */
export function scannedSearch(indexes: readonly string[], logsource: RuleLogsource | undefined, mapping: Pipeline): string {
  const prefix = logsourcePrefix(logsource, mapping);
  return `search ${indexTerm(indexes)}${prefix === '' ? '' : ` ${prefix}`}`;
}

/** Matched events oldest first, at most `limit` of them. */
export function eventsSearch(search: string, limit: number): string {
  return `${search} | sort ${limit} _time`;
}

/** The name of the field that carries a fixture's position through a fixture search. */
export const FIXTURE_FIELD = '_fixture';

/**
 * A fixture test as one search: the fixture events generated in the search itself
 * (`makeresults format=json data=…`, Splunk 9.0+), each with its position in `_fixture`, filtered
 * by the rule's condition; the answer lists the positions that matched.
 */
export function fixtureSearch(rows: ReadonlyArray<Record<string, unknown>>, condition: string): string {
  return `| makeresults format=json data=${quoteSpl(JSON.stringify(rows))} | search ${condition} | table ${FIXTURE_FIELD}`;
}
