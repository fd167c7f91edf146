import type { TenantRecord } from '../../domain/tenants/tenant-service';

export function tenantView({ tenant, environments }: TenantRecord) {
  return { id: tenant.id, name: tenant.name, tier: tenant.tier, retention_days: tenant.retentionDays, environments, created_at: tenant.createdAt.toISOString() };
}
