import { and, desc, eq, isNull, lt, or } from 'drizzle-orm';
import type { ApiDeps } from '../context';
import { auditLog } from '../../db/schema';
import { defineRoute } from '../http/route';
import { decodeCursor, encodeCursor } from '../http/pagination';
import { AuditList, AuditQuery } from './schemas';

export function auditRoutes(deps: ApiDeps, flushAudit: () => Promise<void>) {
  const { db } = deps.database;
  return [
    defineRoute({
      method: 'get',
      path: '/settings/audit',
      operationId: 'listAudit',
      summary: "The tenant's audit log, newest first (operators also see requests no tenant could be found for)",
      tag: 'settings',
      permission: 'admin',
      query: AuditQuery,
      responses: { 200: { description: 'A page of audit entries', schema: AuditList } },
      handler: async ({ query, auth }) => {
        // Rows are written when responses finish; wait for those in flight so a client reading
        // right after its own requests sees them.
        await flushAudit();
        const before = decodeCursor<number>(query.cursor, 'number');
        const rows = await db
          .select()
          .from(auditLog)
          .where(
            and(
              // Requests no tenant could be found for (bad tokens) belong to the service operator.
              auth.permissions.has('operator') ? or(eq(auditLog.tenantId, auth.tenantId), isNull(auditLog.tenantId)) : eq(auditLog.tenantId, auth.tenantId),
              before !== undefined ? lt(auditLog.id, before) : undefined,
              query.status !== undefined ? eq(auditLog.status, query.status) : undefined,
              query.token_id !== undefined ? eq(auditLog.tokenId, query.token_id) : undefined,
            ),
          )
          .orderBy(desc(auditLog.id))
          .limit(query.limit + 1);
        const page = rows.slice(0, query.limit);
        return {
          status: 200,
          body: {
            items: page.map((r) => ({
              id: r.id,
              at: r.at.toISOString(),
              request_id: r.requestId,
              token_id: r.tokenId,
              token_prefix: r.tokenPrefix,
              tenant_id: r.tenantId,
              method: r.method,
              route: r.route,
              path: r.path,
              status: r.status,
              duration_ms: r.durationMs,
              client_ip: r.clientIp,
              user_agent: r.userAgent,
            })),
            next_cursor: rows.length > query.limit ? encodeCursor(page.at(-1)!.id) : null,
          },
        };
      },
    }),
  ];
}
