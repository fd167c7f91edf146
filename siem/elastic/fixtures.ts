import { randomBytes } from 'node:crypto';
import { matchLogsource, type Pipeline } from '../../sigma/pipelines';
import type { RuleLogsource } from '../adapter';

/**
 * Fixture events for an Elastic target. They are written in Sigma's field names; the rule's query
 * reads ECS fields, so each event is renamed with the same ELASTIC_ECS pipeline mapping the query
 * was compiled with (the rule's logsource decides), then nested the way ECS documents are
 * (`process.parent.executable` → `{ process: { parent: { executable } } }`). Keys already in ECS
 * form are kept.
 */

/** Field that numbers the fixtures inside their index, so an ES|QL answer says which matched. */
export const FIXTURE_FIELD = 'detflow_fixture';

/** A fresh fixture index name (lower case, as Elasticsearch requires). */
export function fixtureIndexName(): string {
  return `detflow-fixtures-${randomBytes(6).toString('hex')}`;
}

export function ecsFieldMapping(logsource: RuleLogsource | undefined, pipeline: Pipeline): Readonly<Record<string, string>> {
  const mapping = matchLogsource({ ...logsource, custom: {}, pos: { line: 0, column: 0 } }, pipeline);
  return { ...pipeline.fields, ...mapping?.fields };
}

/** A Sigma-named event as an ECS document: renamed, nested, numbered. */
export function toEcsDocument(event: Record<string, unknown>, fields: Readonly<Record<string, string>>, n: number): Record<string, unknown> {
  const doc: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event)) setPath(doc, fields[key] ?? key, value);
  if (doc['@timestamp'] === undefined) doc['@timestamp'] = new Date().toISOString();
  doc[FIXTURE_FIELD] = n;
  return doc;
}

function setPath(doc: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.');
  let node = doc;
  for (const p of parts.slice(0, -1)) {
    const next = node[p];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[p] = {};
    node = node[p] as Record<string, unknown>;
  }
  node[parts[parts.length - 1]!] = value;
}

/** ECS types of the fields detflow's ES|QL compares other than as keywords. */
const ECS_TYPES: Readonly<Record<string, string>> = {
  '@timestamp': 'date',
  'source.ip': 'ip',
  'destination.ip': 'ip',
  'host.ip': 'ip',
  'client.ip': 'ip',
  'server.ip': 'ip',
  'source.port': 'long',
  'destination.port': 'long',
  'process.pid': 'long',
  'process.parent.pid': 'long',
  'dll.code_signature.signed': 'boolean',
};

/**
 * The mapping of a fixture index: every field the query reads gets a type (its ECS type, ip or
 * date where the query compares it so, else from the fixtures' values, else keyword), so that
 * ES|QL knows every column the query names even when no fixture carries it.
 */
export function fixtureMappings(referenced: ReadonlyMap<string, 'ip' | 'date' | 'any'>, docs: readonly Record<string, unknown>[]): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  const put = (path: string, type: string) => {
    const parts = path.split('.');
    let node = properties;
    for (const p of parts.slice(0, -1)) {
      const obj = (node[p] ??= { properties: {} }) as { properties?: Record<string, unknown> };
      obj.properties ??= {};
      node = obj.properties;
    }
    node[parts[parts.length - 1]!] ??= { type };
  };
  put('@timestamp', 'date');
  put(FIXTURE_FIELD, 'long');
  for (const [field, use] of referenced) {
    if (field.startsWith('_')) continue; // metadata fields (_id, _index, _version)
    put(field, use === 'ip' ? 'ip' : use === 'date' ? 'date' : (ECS_TYPES[field] ?? typeFromValues(docs.map((d) => valueAt(d, field)))));
  }
  return { dynamic_templates: [{ strings_as_keyword: { match_mapping_type: 'string', mapping: { type: 'keyword' } } }], properties };
}

function valueAt(doc: Record<string, unknown>, path: string): unknown {
  let node: unknown = doc;
  for (const p of path.split('.')) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[p];
  }
  return node;
}

function typeFromValues(values: readonly unknown[]): string {
  const present = values.flat().filter((v) => v !== undefined && v !== null);
  if (present.length > 0 && present.every((v) => typeof v === 'boolean')) return 'boolean';
  if (present.length > 0 && present.every((v) => typeof v === 'number')) return present.every((v) => Number.isInteger(v)) ? 'long' : 'double';
  return 'keyword';
}
