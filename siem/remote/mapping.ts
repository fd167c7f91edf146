import { z } from 'zod';
import { parseFieldMap, TARGET_MAPPINGS, targetMapping, type TargetMapping } from '../../sigma/pipelines';
import type { RemoteTargetKind } from './remote-kind';

/**
 * A remote target's data-model settings, the same for every kind: `mapping` (one of its kind's
 * built-ins, e.g. `splunk-cim`, `splunk-sysmon`; the first by default) and `field_map`
 * (`Sigma=target` pairs overriding or adding field renames).
 */
export function mappingSettings(kind: RemoteTargetKind) {
  const names = Object.keys(TARGET_MAPPINGS[kind]) as [string, ...string[]];
  return {
    mapping: z.enum(names, { error: `mapping must be one of ${names.join(', ')}` }).optional(),
    field_map: z
      .string()
      .max(8192)
      .superRefine((value, ctx) => {
        try {
          parseFieldMap(value);
        } catch (err) {
          ctx.addIssue({ code: 'custom', message: `field_map: ${(err as Error).message} (write Sigma=target pairs, comma-separated)` });
        }
      })
      .optional(),
  };
}

// Lint asks for a target's mapping on every call: the pipeline and its hash are built once per settings.
const known = new Map<string, TargetMapping>();

/** The mapping a target's settings choose, with its version. */
export function mappingOf(kind: RemoteTargetKind, settings: { mapping?: string | undefined; field_map?: string | undefined }): TargetMapping {
  const key = JSON.stringify([kind, settings.mapping ?? null, settings.field_map ?? null]);
  let found = known.get(key);
  if (!found) {
    found = targetMapping(kind, settings.mapping, settings.field_map ? parseFieldMap(settings.field_map) : {});
    if (known.size >= 1000) known.clear();
    known.set(key, found);
  }
  return found;
}
