import type { TargetMapping } from '../../sigma/pipelines';
import { mappingOf } from '../../siem/remote/mapping';
import type { RemoteTargetKind } from '../../siem/remote/remote-kind';

/**
 * A remote target's field mapping from its stored settings (`mapping`, `field_map`: plain
 * settings, not credentials, so they are read without opening anything).
 */
export function targetMappingOf(kind: RemoteTargetKind, connection: Readonly<Record<string, unknown>>): TargetMapping {
  const text = (key: string) => (typeof connection[key] === 'string' ? (connection[key] as string) : undefined);
  return mappingOf(kind, { mapping: text('mapping'), field_map: text('field_map') });
}

/** Whether two settings choose the same mapping (the version covers the built-in and every override). */
export function sameMapping(kind: string, a: Readonly<Record<string, unknown>>, b: Readonly<Record<string, unknown>>): boolean {
  if (kind === 'local') return true;
  return targetMappingOf(kind as RemoteTargetKind, a).version === targetMappingOf(kind as RemoteTargetKind, b).version;
}
