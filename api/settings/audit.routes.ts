import type { ApiDeps } from '../context';
import { defineRoute } from '../http/route';
import { decodeCursor, encodeCursor } from '../http/pagination';
import { listAuditEntries } from '../../domain/audit/audit-log';
import { auditEntryView } from './audit-entry.view';
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
      scope: { kind: 'every-environment' },
      query: AuditQuery,
      responses: { 200: { description: 'A page of audit entries', schema: AuditList } },
      handler: async ({ query, auth }) => {
        // Rows are written when responses finish; wait for those in flight so a client reading
        // right after its own requests sees them.
        await flushAudit();
        const before = decodeCursor<number>(query.cursor, 'number');
        const page = await listAuditEntries(db, auth, { before, status: query.status, tokenId: query.token_id, limit: query.limit });
        return {
          status: 200,
          body: { items: page.items.map(auditEntryView), next_cursor: page.more ? encodeCursor(page.items.at(-1)!.id) : null },
        };
      },
    }),
  ];
}
