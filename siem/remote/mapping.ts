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

/** The mapping a target's settings choose, with its version. */
export function mappingOf(kind: RemoteTargetKind, settings: { mapping?: string | undefined; field_map?: string | undefined }): TargetMapping {
  return targetMapping(kind, settings.mapping, settings.field_map ? parseFieldMap(settings.field_map) : {});
}
