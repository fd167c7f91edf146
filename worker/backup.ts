import fs from 'node:fs';
import path from 'node:path';
import { writePgliteDataDir, type Database } from '../db/client';
import { conflict } from '../domain/errors';
import type { LocalEventStore } from '../siem/local/event-store';
import type { SupervisedDevServer } from './supervised-dev-server';

export type BackupResult = {
  /** A folder laid out like DATA_DIR: copied to a new place, it is that place's DATA_DIR. */
  path: string;
  createdAt: Date;
  files: string[];
  /** How long the embedded Temporal dev server was stopped; null when Temporal is external. */
  temporalPausedMs: number | null;
};

export type EmbeddedParts = {
  dataDir: string;
  backupsDir: string;
  database: Database;
  localStore: LocalEventStore;
  /** The embedded dev server, stopped while its SQLite file is copied; undefined with TEMPORAL_ADDRESS. */
  devServer: SupervisedDevServer | undefined;
};

const TEMPORAL_FILES = ['temporal.db', 'temporal.db-wal'];

/**
 * A consistent backup of the embedded default while it runs. Temporal is stopped first, so no run
 * moves on while the rest is copied; the database and the event store are copied in that pause, so
 * they hold at least every effect the copied Temporal state knows of. Effects of activity attempts
 * that finish in the pause are in the copy but not their completion: after a restore those attempts
 * run again, and activities are idempotent.
 */
export async function backupEmbedded(parts: EmbeddedParts, now = new Date()): Promise<BackupResult> {
  const { database } = parts;
  if (!database.dumpDataDir) throw conflict('The database is PostgreSQL (DATABASE_URL): back it up with pg_dump (README, Operations)');
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  const target = path.join(parts.backupsDir, stamp);
  const partial = `${target}.partial`;
  if (fs.existsSync(target)) throw conflict(`A backup already exists at ${target}`);
  fs.rmSync(partial, { recursive: true, force: true });
  fs.mkdirSync(path.join(partial, 'siem'), { recursive: true });
  fs.mkdirSync(path.join(partial, 'temporal'), { recursive: true });

  // Inside the pause only what must be: the copies. The PGlite tarball is written out after it.
  const copyStores = async (): Promise<Blob> => {
    if (parts.devServer) {
      for (const file of TEMPORAL_FILES) {
        const from = path.join(parts.dataDir, 'temporal', file);
        if (fs.existsSync(from)) fs.copyFileSync(from, path.join(partial, 'temporal', file));
      }
    }
    const tarball = await database.dumpDataDir!();
    await parts.localStore.backupTo(path.join(partial, 'siem', 'events.duckdb'));
    return tarball;
  };
  let temporalPausedMs: number | null = null;
  try {
    let tarball: Blob;
    if (parts.devServer) {
      const started = Date.now();
      tarball = await parts.devServer.pausedWhile(copyStores);
      temporalPausedMs = Date.now() - started;
    } else {
      tarball = await copyStores();
    }
    await writePgliteDataDir(path.join(partial, 'pglite'), tarball);
    // Without it the sealed secrets (target credentials, webhook secrets) cannot be opened.
    const key = path.join(parts.dataDir, 'secret.key');
    if (fs.existsSync(key)) fs.copyFileSync(key, path.join(partial, 'secret.key'));
    const files = listFiles(partial);
    fs.writeFileSync(
      path.join(partial, 'backup.json'),
      JSON.stringify({ created_at: now.toISOString(), files, temporal_paused_ms: temporalPausedMs, embedded_temporal: parts.devServer !== undefined }, null, 2) + '\n',
    );
    fs.renameSync(partial, target);
    return { path: target, createdAt: now, files, temporalPausedMs };
  } catch (err) {
    fs.rmSync(partial, { recursive: true, force: true });
    throw err;
  }
}

function listFiles(root: string, dir = root): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listFiles(root, path.join(dir, e.name)) : [path.relative(root, path.join(dir, e.name))]))
    .sort();
}

/** One backup at a time: a second request while one is taken is refused rather than queued. */
export function backupTaker(parts: EmbeddedParts): () => Promise<BackupResult> {
  let taking = false;
  return async () => {
    if (taking) throw conflict('A backup is being taken; try again when it is done');
    taking = true;
    try {
      return await backupEmbedded(parts);
    } finally {
      taking = false;
    }
  };
}
