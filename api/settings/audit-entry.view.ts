import type { AuditRow } from '../../domain/audit/audit-log';

export function auditEntryView(r: AuditRow) {
  return {
    id: r.id,
    at: r.at.toISOString(),
    request_id: r.requestId,
    token_id: r.tokenId,
    token_prefix: r.tokenPrefix,
    principal: r.principal,
    tenant_id: r.tenantId,
    method: r.method,
    route: r.route,
    path: r.path,
    status: r.status,
    duration_ms: r.durationMs,
    client_ip: r.clientIp,
    user_agent: r.userAgent,
    auth_failure: r.authFailure,
  };
}
