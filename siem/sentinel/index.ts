import type { RemoteKind } from '../remote/remote-kind';
import { SentinelAdapter } from './adapter';
import { sentinelConnection, type SentinelConnection } from './connection';

/** Microsoft Sentinel targets: scheduled analytics rules over ARM, searches over the Log Analytics query API. */
export const sentinelKind: RemoteKind<SentinelConnection> = {
  kind: 'sentinel',
  connection: sentinelConnection,
  create: (binding) => new SentinelAdapter(binding),
};

export { SentinelAdapter, azureMessage } from './adapter';
export { sentinelConnection, DEFAULT_API_VERSION, type SentinelConnection } from './connection';
