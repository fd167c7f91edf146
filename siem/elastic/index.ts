import type { RemoteKind } from '../remote/remote-kind';
import { ElasticAdapter } from './adapter';
import { elasticConnection, type ElasticConnection } from './connection';

export { ElasticAdapter } from './adapter';
export { elasticConnection, type ElasticConnection } from './connection';

/** Elastic Security: Kibana's detection engine API and Elasticsearch's ES|QL (docs/siem/elastic.md). */
export const elasticKind: RemoteKind<ElasticConnection> = {
  kind: 'elastic',
  connection: elasticConnection,
  create: (binding) => new ElasticAdapter(binding),
};
