import { and, desc, eq, isNull, lt, or } from 'drizzle-orm';
import type { Db } from '../../db/client';
import { auditLog } from '../../db/schema';
import type { Actor } from '../tenants/actor';

export type AuditRow = typeof auditLog.$inferSelect;

export type AuditFilter = {
  /** Only entries older than this id (where a previous page ended). */
  before: number | undefined;
  status: number | undefined;
  tokenId: string | undefined;
  limit: number;
};

/** The tenant's audit entries, newest first; operators also see requests no tenant could be found for. */
export async function listAuditEntries(db: Db, auth: Actor, filter: AuditFilter): Promise<{ items: AuditRow[]; more: boolean }> {
  const rows = await db
    .select()
    .from(auditLog)
    .where(
      and(
        // Requests no tenant could be found for (bad tokens) belong to the service operator.
        auth.permissions.has('operator') ? or(eq(auditLog.tenantId, auth.tenantId), isNull(auditLog.tenantId)) : eq(auditLog.tenantId, auth.tenantId),
        filter.before !== undefined ? lt(auditLog.id, filter.before) : undefined,
        filter.status !== undefined ? eq(auditLog.status, filter.status) : undefined,
        filter.tokenId !== undefined ? eq(auditLog.tokenId, filter.tokenId) : undefined,
      ),
    )
    .orderBy(desc(auditLog.id))
    .limit(filter.limit + 1);
  return { items: rows.slice(0, filter.limit), more: rows.length > filter.limit };
}
