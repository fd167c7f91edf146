import { createHash } from 'node:crypto';
import { ELASTIC_ECS, SENTINEL, SENTINEL_ASIM, SPLUNK_CIM, SPLUNK_SYSMON } from './data';
import type { Pipeline } from './types';

export type RemoteKind = 'splunk' | 'elastic' | 'sentinel';

/**
 * The data models a target of each kind can search, by the name a target's `mapping` setting
 * gives; the first is the default. Each matches a standard pySigma pipeline for that SIEM.
 */
export const TARGET_MAPPINGS: Readonly<Record<RemoteKind, Readonly<Record<string, Pipeline>>>> = {
  splunk: { 'splunk-cim': SPLUNK_CIM, 'splunk-sysmon': SPLUNK_SYSMON },
  elastic: { 'elastic-ecs': ELASTIC_ECS },
  sentinel: { 'sentinel-defender': SENTINEL, 'sentinel-asim': SENTINEL_ASIM },
};

export function defaultMapping(kind: RemoteKind): string {
  return Object.keys(TARGET_MAPPINGS[kind])[0]!;
}

/** A target's mapping: the built-in data model it chose, its field overrides, and the version of the two together. */
export interface TargetMapping {
  /** `<built-in>` or `<built-in>+overrides`. */
  readonly name: string;
  /** The first 12 hex digits of the SHA-256 of the effective pipeline: what a deployment records. */
  readonly version: string;
  readonly pipeline: Pipeline;
}

const FIELD_NAME = /^[A-Za-z_@][A-Za-z0-9_.@-]*$/;

/**
 * Field overrides as a target setting holds them (settings are flat values): `Sigma=target` pairs,
 * comma-separated, e.g. `CommandLine=process_command_line, Image=process_exec`. Throws with the
 * offending pair.
 */
export function parseFieldMap(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const raw of text.split(',')) {
    const pair = raw.trim();
    if (pair === '') continue;
    const [from, to, ...rest] = pair.split('=').map((p) => p.trim());
    if (rest.length || !from || !to || !FIELD_NAME.test(from) || !FIELD_NAME.test(to)) throw new RangeError(`'${pair}' is not a Sigma=target field pair`);
    if (from in out) throw new RangeError(`${from} is mapped twice`);
    out[from] = to;
  }
  return out;
}

/** A pipeline's content as a stable text: key order fixed, so the same mapping always hashes the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/**
 * The pipeline a target compiles with: its kind's built-in `mapping` (the default when absent),
 * with `overrides` applied over every field rename, pipeline-wide and per logsource. An override
 * places a field the built-in leaves out, or moves one it places.
 */
export function targetMapping(kind: RemoteKind, mapping?: string, overrides: Readonly<Record<string, string>> = {}): TargetMapping {
  const name = mapping ?? defaultMapping(kind);
  const base = TARGET_MAPPINGS[kind][name];
  if (!base) throw new RangeError(`${kind} targets have no mapping ${name}; choose one of ${Object.keys(TARGET_MAPPINGS[kind]).join(', ')}`);
  const overridden = Object.keys(overrides).length > 0;
  const pipeline: Pipeline = overridden
    ? {
        ...base,
        name: `${name}+overrides`,
        fields: { ...base.fields, ...overrides },
        logsources: base.logsources.map((l) => (l.fields ? { ...l, fields: { ...l.fields, ...overrides } } : l)),
      }
    : base;
  const version = createHash('sha256').update(canonical(pipeline), 'utf8').digest('hex').slice(0, 12);
  return { name: overridden ? `${name}+overrides` : name, version, pipeline };
}
