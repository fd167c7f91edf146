import { elasticKind } from './elastic';
import type { RemoteKind, RemoteTargetKind } from './remote/remote-kind';

/** The remote target kinds this version can reach, each in its own folder. */
export const REMOTE_KINDS: Partial<Record<RemoteTargetKind, RemoteKind>> = {
  elastic: elasticKind as RemoteKind,
};
