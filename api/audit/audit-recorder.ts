import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import type { Db } from '../../db/client';
import { auditLog } from '../../db/schema';

/** What the request pipeline learns about the caller, for the audit row. */
export type AuditSubject = { tokenId?: string; tenantId?: string; tokenPrefix?: string | null; route?: string };

export function auditSubject(res: Response): AuditSubject {
  return (res.locals.audit ??= {}) as AuditSubject;
}

/**
 * Records every request under /api/v1, whatever its status, once the response is finished: time,
 * request id, token (or the prefix presented), tenant, method, route, status, duration, client
 * address and user agent. Never bodies or secrets.
 */
export function auditRequests(db: Db, logger: Logger, pending: Set<Promise<unknown>>) {
  return (req: Request, res: Response, next: NextFunction) => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      const subject = auditSubject(res);
      const write = db
        .insert(auditLog)
        .values({
          requestId: String(req.id),
          tokenId: subject.tokenId ?? null,
          tokenPrefix: subject.tokenPrefix ?? null,
          tenantId: subject.tenantId ?? null,
          method: req.method,
          route: subject.route ?? '(unmatched)',
          path: req.originalUrl.split('?')[0]!.slice(0, 2048),
          status: res.statusCode,
          durationMs: Number((process.hrtime.bigint() - started) / 1_000_000n),
          clientIp: req.ip ?? null,
          userAgent: req.get('user-agent')?.slice(0, 512) ?? null,
        })
        .then(
          () => undefined,
          (err: unknown) => logger.error({ err, requestId: req.id }, 'failed to write the audit row'),
        )
        .finally(() => pending.delete(write));
      pending.add(write);
    });
    next();
  };
}
