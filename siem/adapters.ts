import fs from 'node:fs';
import path from 'node:path';
import type { SigmaRule } from '../sigma';
import type { SiemAdapter, TargetKind } from './adapter';
import { LocalEventStore } from './local/event-store';
import type { LocalEventStoreOptions } from './local/store-types';
import { LocalSiemAdapter } from './local/local-adapter';
import { compileSigmaForLocal, compileSigmaRulesetForLocal } from './local/sigma-compiler';
import { isCredentialKey } from './remote/credentials';
import type { RemoteAdapter, RemoteKind, RemoteTargetKind } from './remote/remote-kind';
import { REMOTE_KINDS } from './remote-kinds';

/** A target as the service stores it: what the registry needs to reach it. */
export interface TargetRef {
  readonly id: string;
  readonly name: string;
  readonly kind: TargetKind | string;
  /** The stored connection settings, credentials sealed. */
  readonly connection?: Readonly<Record<string, unknown>> | null;
  readonly environment?: string;
  /** The `|expand` placeholder values rules are compiled with on this target (its own over its environment's). */
  readonly resolvedPlaceholders?: Readonly<Record<string, readonly string[]>> | null;
}

/**
 * The adapters of one process. The `local` kind's DuckDB file can be opened by one process only,
 * so the embedded SIEM lives where `npm start` runs the API and the worker together. Remote kinds
 * get one adapter per target (and per version of its settings), built on first use.
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
  /** The remote adapters built so far, by target id. */
  remote: Map<string, { settings: string; adapter: RemoteAdapter }>;
  /** Opens a sealed credential; absent in processes that hold no secret key (then remote targets cannot be reached). */
  openSecret: ((sealed: string) => string) | undefined;
  now: () => Date;
  close(): Promise<void>;
};

export class UnsupportedTargetKind extends Error {
  override name = 'UnsupportedTargetKind';
  constructor(readonly kind: string) {
    super(`Targets of kind ${kind} have no adapter in this version of detflow`);
  }
}

/** A target whose stored settings its kind refuses (an older version's settings, or a sealed value that no longer opens). */
export class TargetMisconfigured extends Error {
  override name = 'TargetMisconfigured';
  constructor(
    readonly target: string,
    why: string,
  ) {
    super(`Target ${target} cannot be reached as configured: ${why}`);
  }
}

/**
 * `dataDir` undefined keeps the event store in memory (tests, and an API process running apart from
 * the worker, which passes `acceptsLocalEvents: false`).
 */
export async function openSiemAdapters(options: {
  dataDir: string | undefined;
  now?: () => Date;
  acceptsLocalEvents?: boolean;
  openSecret?: (sealed: string) => string;
  /** The local event store's limits (DETFLOW_EVENT_STORE_MEMORY_LIMIT, DETFLOW_INGEST_MAX_PENDING_BATCHES). */
  eventStore?: Pick<LocalEventStoreOptions, 'memoryLimit' | 'maxPendingBatches'>;
}): Promise<SiemAdapters> {
  let file = ':memory:';
  if (options.dataDir) {
    fs.mkdirSync(path.join(options.dataDir, 'siem'), { recursive: true });
    file = path.join(options.dataDir, 'siem', 'events.duckdb');
  }
  const localStore = await LocalEventStore.open({ path: file, ...options.eventStore });
  const local = new LocalSiemAdapter<SigmaRule>({
    store: localStore,
    compiler: compileSigmaForLocal,
    rulesetCompiler: compileSigmaRulesetForLocal,
    ...(options.now ? { now: options.now } : {}),
  });
  const remote = new Map<string, { settings: string; adapter: RemoteAdapter }>();
  return {
    local,
    localStore,
    acceptsLocalEvents: options.acceptsLocalEvents ?? true,
    remote,
    openSecret: options.openSecret,
    now: options.now ?? (() => new Date()),
    close: async () => {
      for (const { adapter } of remote.values()) adapter.close();
      remote.clear();
      await localStore.close();
    },
  };
}

export function remoteKind(kind: string): RemoteKind | undefined {
  return (REMOTE_KINDS as Partial<Record<string, RemoteKind>>)[kind];
}

/** Whether targets of this kind have an adapter in this version. */
export function hasAdapter(kind: string): boolean {
  return kind === 'local' || remoteKind(kind) !== undefined;
}

/**
 * The adapter of one target. A remote target's adapter is built from its stored settings (the
 * credentials opened here, validated by the kind's schema) and kept until the settings change.
 */
export function adapterFor(adapters: SiemAdapters, target: TargetRef): SiemAdapter<SigmaRule> {
  if (target.kind === 'local') return adapters.local;
  const kind = remoteKind(target.kind);
  if (!kind) throw new UnsupportedTargetKind(target.kind);
  const stored = target.connection ?? {};
  const settings = JSON.stringify(stored);
  const cached = adapters.remote.get(target.id);
  if (cached && cached.settings === settings) return cached.adapter;
  const open = openConnection(adapters, target, stored);
  const parsed = kind.connection.safeParse(open);
  if (!parsed.success) {
    throw new TargetMisconfigured(target.name, parsed.error.issues.map((i) => `${i.path.join('.') || 'connection'}: ${i.message}`).join('; '));
  }
  const adapter = kind.create({ targetId: target.id, targetName: target.name, connection: parsed.data, now: adapters.now });
  // Calls still running on the replaced adapter keep their connections a while.
  if (cached) setTimeout(() => cached.adapter.close(), 60_000).unref();
  adapters.remote.set(target.id, { settings, adapter });
  return adapter;
}

function openConnection(adapters: SiemAdapters, target: TargetRef, stored: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(stored).map(([k, v]) => {
      if (!isCredentialKey(k) || typeof v !== 'string') return [k, v];
      if (!adapters.openSecret) throw new TargetMisconfigured(target.name, 'this process holds no secret key to open its credentials (DETFLOW_SECRET_KEY)');
      try {
        return [k, adapters.openSecret(v)];
      } catch {
        throw new TargetMisconfigured(target.name, `its ${k} does not open with this DETFLOW_SECRET_KEY; set the credential again`);
      }
    }),
  );
}

export type { RemoteTargetKind };
