import type { TargetRow } from '../../domain/targets/targets';
import { maskConnection } from '../../domain/targets/target-connection';

export function targetView(row: TargetRow) {
  return {
    name: row.name,
    kind: row.kind,
    environment: row.environment,
    connection: maskConnection(row.connection),
    detection_interval: row.detectionInterval,
    cost_model: row.costModel,
    built_in: row.builtIn,
    placeholders: row.placeholders,
    settings_version: row.settingsVersion,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
