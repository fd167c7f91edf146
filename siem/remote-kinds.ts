import type { RemoteKind, RemoteTargetKind } from './remote/remote-kind';
import { sentinelKind } from './sentinel';

/** The remote target kinds this version can reach, each in its own folder. */
export const REMOTE_KINDS: Partial<Record<RemoteTargetKind, RemoteKind>> = {
  sentinel: sentinelKind as RemoteKind,
};
