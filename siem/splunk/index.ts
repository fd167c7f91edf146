import type { RemoteKind } from '../remote/remote-kind';
import { SplunkAdapter } from './adapter';
import { splunkConnection, type SplunkConnection } from './connection';

/** The `splunk` target kind: Splunk Enterprise / Splunk Cloud Platform over the REST API (docs/siem/splunk.md). */
export const splunkKind: RemoteKind<SplunkConnection> = {
  kind: 'splunk',
  connection: splunkConnection,
  create: (binding) => new SplunkAdapter(binding),
};

export { SplunkAdapter } from './adapter';
export { splunkConnection, type SplunkConnection } from './connection';
