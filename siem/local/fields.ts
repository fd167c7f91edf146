/**
 * Which event fields the local store keeps as real columns, and how any Sigma field name becomes a
 * SQL expression over the store.
 *
 * A promoted ("hot") column holds exactly `json_extract_string(raw, '$."Field"')`, computed once at
 * ingestion, so a rule reads the same value whether the SQL backend maps its field to the column or
 * to the JSON fallback: promotion only changes speed, never a match. Columns are VARCHAR for that
 * reason (EventID 1 is stored as '1', as json_extract_string yields it).
 */

/** The promoted fields: the Sigma names most rules over Windows/Sysmon/Linux telemetry use. */
export const PROMOTED_FIELDS: readonly string[] = [
  // process creation (Sysmon 1, Security 4688, auditd/Linux process_creation)
  'Image',
  'CommandLine',
  'ParentImage',
  'ParentCommandLine',
  'OriginalFileName',
  'Product',
  'Company',
  'Description',
  'CurrentDirectory',
  'IntegrityLevel',
  'Hashes',
  'User',
  'ProcessId',
  'ParentProcessId',
  'ParentUser',
  'LogonId',
  // common envelope
  'EventID',
  'Computer',
  'Channel',
  'Provider_Name',
  // file and registry events
  'TargetFilename',
  'TargetObject',
  'Details',
  'EventType',
  'ImageLoaded',
  'Signed',
  // network and DNS
  'DestinationIp',
  'DestinationPort',
  'DestinationHostname',
  'SourceIp',
  'SourcePort',
  'Protocol',
  'Initiated',
  'QueryName',
  'QueryResults',
  // process access, pipes, services, scripts
  'SourceImage',
  'TargetImage',
  'GrantedAccess',
  'PipeName',
  'ServiceName',
  'ServiceFileName',
  'ImagePath',
  'ScriptBlockText',
  // Windows Security logon/object events
  'TargetUserName',
  'SubjectUserName',
  'LogonType',
  'IpAddress',
  'ObjectName',
  'ShareName',
];

/**
 * Columns every event row has besides the promoted ones. Their names are disjoint from the promoted
 * fields even case-insensitively (DuckDB identifiers are case-insensitive): a test checks it.
 */
export const BASE_COLUMNS = ['seq', 'tenant_id', 'event_id', 'event_time', 'ingested_at', 'ls_product', 'ls_category', 'ls_service', 'raw_bytes', 'raw', 'target_id'] as const;

const PROMOTED = new Set(PROMOTED_FIELDS);

export function isPromotedField(field: string): boolean {
  return PROMOTED.has(field);
}

export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function sqlLiteral(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** JSON Pointer of a key path: DuckDB reads `*` there as a key, where `$."*"` is a wildcard. */
function jsonPointer(keys: readonly string[]): string {
  return sqlLiteral(keys.map((k) => `/${k.replace(/~/g, '~0').replace(/\//g, '~1')}`).join(''));
}

/** A JSON path naming one top-level key, quoted so dots, spaces and quotes in names are literal. */
export function jsonKeyPath(key: string): string {
  if (key.includes('*')) return jsonPointer([key]);
  return sqlLiteral(`$."${key.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`);
}

function nestedPath(field: string): string {
  const keys = field.split('.');
  if (keys.some((k) => k.includes('*'))) return jsonPointer(keys);
  return sqlLiteral(`$.${keys.map((s) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`).join('.')}`);
}

/**
 * The value of a Sigma field as text (NULL when absent), over a table with a `raw` JSON column.
 * Promoted fields read their column; others read `raw`. Dotted names try the literal key first and
 * then the nested path, the convention of the Sigma SQL backend's default.
 */
export function fieldExpression(field: string): string {
  if (PROMOTED.has(field)) return quoteIdentifier(field);
  const flat = `json_extract_string(raw, ${jsonKeyPath(field)})`;
  if (!field.includes('.')) return flat;
  return `coalesce(${flat}, json_extract_string(raw, ${nestedPath(field)}))`;
}

/**
 * True when the field is present, even with a JSON null value (Sigma `exists`). Always reads `raw`:
 * a promoted column cannot tell a JSON null from an absent key.
 */
export function existsExpression(field: string): string {
  if (!field.includes('.')) return `json_exists(raw, ${jsonKeyPath(field)})`;
  return `(json_exists(raw, ${jsonKeyPath(field)}) OR json_exists(raw, ${nestedPath(field)}))`;
}

/** Column definitions of the promoted fields, for CREATE TABLE. */
export function promotedColumnsDdl(): string {
  return PROMOTED_FIELDS.map((f) => `${quoteIdentifier(f)} VARCHAR`).join(',\n  ');
}

/**
 * The promoted columns of an event, from one call: `json_extract_string(raw, [path, …])` parses the
 * event once and gives, per path, the very text the scalar `json_extract_string(raw, path)` of the
 * JSON fallback gives (a test checks it over awkward values), so the columns equal the fallback by
 * construction. Parsing every member as JSON and turning each to text with `->> '$'` parsed each
 * member a second time (measured at about 0.5 s per 100,000 Sysmon events). `extraKeys` (an ingest
 * batch's timestamp, id and logsource fields) follow the promoted fields in the list, so one parse
 * serves them too.
 */
export function promotedExtraction(rawExpr: string, extraKeys: readonly string[] = []): string {
  return `json_extract_string(${rawExpr}, [${[...PROMOTED_FIELDS, ...extraKeys].map(jsonKeyPath).join(', ')}])`;
}

/** SELECT-list items producing the promoted columns from a `promotedExtraction` list (column `list`). */
export function promotedItems(list: string): string {
  return PROMOTED_FIELDS.map((f, i) => `${list}[${i + 1}] AS ${quoteIdentifier(f)}`).join(', ');
}

/** SQL: the text of `extraKeys[index]` in a `promotedExtraction` list (column `list`). */
export function extraKeyText(list: string, index: number): string {
  return `${list}[${PROMOTED_FIELDS.length + index + 1}]`;
}
