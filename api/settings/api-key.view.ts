import type { ApiKeyRecord, IssuedApiKey } from '../../domain/tenants/tenant-service';

export function apiKeyView(row: ApiKeyRecord) {
  return {
    id: row.id,
    name: row.name,
    prefix: row.displayPrefix,
    tenant_id: row.tenantId,
    permissions: row.permissions,
    environments: row.environments ?? null,
    principal: row.principal,
    created_at: row.createdAt.toISOString(),
    expires_at: row.expiresAt?.toISOString() ?? null,
    revoked_at: row.revokedAt?.toISOString() ?? null,
  };
}

/** A token just created: the only answer that carries the token itself. */
export function issuedApiKeyView(key: IssuedApiKey, expiresAtCapped = false) {
  return { ...apiKeyView(key), token: key.token, expires_at_capped: expiresAtCapped };
}
