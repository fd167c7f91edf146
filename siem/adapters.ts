import fs from 'node:fs';
import path from 'node:path';
import type { SigmaRule } from '../sigma';
import type { SiemAdapter, TargetKind } from './adapter';
import { LocalEventStore } from './local/event-store';
import { LocalSiemAdapter } from './local/local-adapter';
import { compileSigmaForLocal } from './local/sigma-compiler';

/**
 * The adapters of one process, by target kind. The `local` kind's DuckDB file can be opened by one
 * process only, so the embedded SIEM lives where `npm start` runs the API and the worker together.
 */
export type SiemAdapters = {
  local: LocalSiemAdapter<SigmaRule>;
  localStore: LocalEventStore;
  /**
   * Whether this process holds the local kind's events: false in an API process running apart from
   * the worker (the scaled topology), whose own in-memory store serves rule tests' fixtures only —
   * events sent there would be invisible to the worker's detection and gone at the next restart.
   */
  acceptsLocalEvents: boolean;
  close(): Promise<void>;
};

export class UnsupportedTargetKind extends Error {
  override name = 'UnsupportedTargetKind';
  constructor(readonly kind: string) {
    super(`Targets of kind ${kind} have no adapter in this version of detflow; only local targets can run rules yet`);
  }
}

/**
 * `dataDir` undefined keeps the event store in memory (tests, and an API process running apart from
 * the worker, which passes `acceptsLocalEvents: false`).
 */
export async function openSiemAdapters(options: { dataDir: string | undefined; now?: () => Date; acceptsLocalEvents?: boolean }): Promise<SiemAdapters> {
  let file = ':memory:';
  if (options.dataDir) {
    fs.mkdirSync(path.join(options.dataDir, 'siem'), { recursive: true });
    file = path.join(options.dataDir, 'siem', 'events.duckdb');
  }
  const localStore = await LocalEventStore.open({ path: file });
  const local = new LocalSiemAdapter<SigmaRule>({ store: localStore, compiler: compileSigmaForLocal, ...(options.now ? { now: options.now } : {}) });
  return { local, localStore, acceptsLocalEvents: options.acceptsLocalEvents ?? true, close: () => localStore.close() };
}

export function adapterFor(adapters: SiemAdapters, kind: TargetKind | string): SiemAdapter<SigmaRule> {
  if (kind === 'local') return adapters.local;
  throw new UnsupportedTargetKind(kind);
}
