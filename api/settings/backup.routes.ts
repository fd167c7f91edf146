import { z } from 'zod';
import type { ApiDeps } from '../context';
import { defineRoute } from '../http/route';
import { ProblemSchema } from '../http/problem';
import { openapi } from '../http/zod-openapi';
import { conflict } from '../../domain/errors';

/** What the process gives the API to take a backup of the embedded default (worker/backup.ts). */
export type TakeBackup = () => Promise<{ path: string; createdAt: Date; files: string[]; temporalPausedMs: number | null }>;

const Backup = openapi(
  z.object({
    path: z.string(),
    created_at: z.string(),
    files: z.array(z.string()),
    temporal_paused_ms: z.number().int().nullable(),
  }),
  'Backup',
);

/** Backups of the embedded default, the service operator's. */
export function backupRoutes(deps: ApiDeps) {
  return [
    defineRoute({
      method: 'post',
      path: '/settings/backup',
      operationId: 'createBackup',
      summary: 'Back up the running embedded default (PGlite, Temporal dev server, event store, secret key) into a new folder on the server',
      tag: 'settings',
      permission: 'operator',
      scope: { kind: 'service' },
      responses: {
        201: { description: 'The backup, a folder laid out like DATA_DIR', schema: Backup },
        409: { description: 'Not the embedded default (PostgreSQL is backed up with pg_dump), or a backup is already being taken', schema: ProblemSchema },
      },
      handler: async () => {
        if (!deps.backup) throw conflict('This process takes no backups: back up PostgreSQL with pg_dump and Temporal per its own documentation (README, Operations)');
        const taken = await deps.backup();
        return {
          status: 201,
          body: { path: taken.path, created_at: taken.createdAt.toISOString(), files: taken.files, temporal_paused_ms: taken.temporalPausedMs },
        };
      },
    }),
  ];
}
