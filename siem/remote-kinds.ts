import { elasticKind } from './elastic';
import type { RemoteKind, RemoteTargetKind } from './remote/remote-kind';
import { sentinelKind } from './sentinel';
import { splunkKind } from './splunk';

/** The remote target kinds this version can reach, each in its own folder. */
export const REMOTE_KINDS: Partial<Record<RemoteTargetKind, RemoteKind>> = {
  splunk: splunkKind as RemoteKind,
  elastic: elasticKind as RemoteKind,
  sentinel: sentinelKind as RemoteKind,
};
