import type { z } from 'zod';
import type { SigmaRule } from '../../sigma';
import type { SiemAdapter, TargetKind } from '../adapter';

export type RemoteTargetKind = Exclude<TargetKind, 'local'>;

/** What a remote adapter is built from: one target's identity and its connection settings, credentials in clear. */
export interface RemoteTargetBinding<TConnection> {
  /** The service's target id (stable across renames). */
  readonly targetId: string;
  /** The target's name, for messages. */
  readonly targetName: string;
  readonly connection: TConnection;
  /** Clock (tests pin it). */
  readonly now: () => Date;
}

/** A remote adapter holds connections (and tokens); `close` releases them. */
export type RemoteAdapter = SiemAdapter<SigmaRule> & { close(): void };

/**
 * One remote target kind: how its connection settings are validated and how an adapter is built
 * for one target. The registry (`siem/adapters.ts`) keeps one adapter per target and settings, so
 * connection pools and cached tokens live as long as the settings do.
 */
export interface RemoteKind<TConnection = unknown> {
  readonly kind: RemoteTargetKind;
  /** Validates a target's `connection` (credentials in clear); its messages name the setting. */
  readonly connection: z.ZodType<TConnection>;
  create(binding: RemoteTargetBinding<TConnection>): RemoteAdapter;
}
