import { ConfigError, loadConfig } from '../config/env';
import { SecretBox } from '../config/secret-box';
import { openSiemAdapters } from '../siem/adapters';
import { createLogger } from '../config/logger';
import { databaseOptionsFromConfig, openDatabase } from '../db/client';
import { connectClient, ensureSearchAttributes } from '../worker/temporal-client';
import { ensureBootstrap } from '../domain/tenants/tenant-service';
import { startApi } from './server';
import { createServiceMetrics } from '../lib/metrics/service-metrics';

/**
 * The API alone, for the scaled topology: several of these behind a load balancer, sharing
 * PostgreSQL (DATABASE_URL) and a Temporal cluster (TEMPORAL_ADDRESS) with separate workers.
 */
async function main() {
  let config;
  try {
    config = loadConfig();
    if (!config.temporal.address) throw new ConfigError('TEMPORAL_ADDRESS: required when the API runs on its own (npm start runs everything in one process)');
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
  const logger = createLogger(config.logLevel, 'detflow-api');
  const secrets = SecretBox.fromConfig(config);
  // The worker holds the local kind's events (its DuckDB file belongs to one process): this API's
  // in-memory store serves rule tests' fixtures, and refuses events rather than lose them.
  const siem = await openSiemAdapters({ dataDir: undefined, acceptsLocalEvents: false, openSecret: (sealed) => secrets.open(sealed) });
  const database = await openDatabase(databaseOptionsFromConfig(config));
  await database.migrate();
  const bootstrapToken = await ensureBootstrap(database.db, { tier: config.defaultTier, token: config.bootstrapToken });
  if (bootstrapToken) process.stdout.write(`Bootstrap admin token (shown once, keep it safe): ${bootstrapToken}\n`);
  const client = await connectClient(config.temporal.address!, config.temporal.namespace);
  await ensureSearchAttributes(client, config.temporal.namespace);
  const api = await startApi(
    {
      config,
      database,
      logger,
      secrets,
      siem,
      temporal: { client, namespace: config.temporal.namespace, taskQueue: config.temporal.taskQueue, uiUrl: config.temporal.uiUrl },
      // This process's own metrics (HTTP and events); detection and webhooks are the workers'.
      metrics: createServiceMetrics(),
    },
    config.host,
    config.port,
  );
  logger.info({ url: api.url, docs: `${api.url}/docs` }, 'API listening');
  const stop = async () => {
    await api.close(config.shutdownGraceSeconds * 1000);
    await client.connection.close();
    await database.close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((err: unknown) => {
  process.stderr.write(`detflow API failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
