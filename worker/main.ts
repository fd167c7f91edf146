import { ConfigError, loadConfig } from '../config/env';
import { SecretBox } from '../config/secret-box';
import { openSiemAdapters } from '../siem/adapters';
import { createLogger } from '../config/logger';
import { installTemporalRuntime } from './temporal-runtime';
import { databaseOptionsFromConfig, openDatabase } from '../db/client';
import { connectClient, ensureSearchAttributes } from './temporal-client';
import { createWorker } from './create-worker';
import { adoptUntargetedEvents } from '../domain/targets/untargeted-events';
import { createServiceMetrics } from '../lib/metrics/service-metrics';
import { startMemorySampler } from './memory-sampler';
import { startMetricsServer } from './metrics-server';

/** The worker alone, for the scaled topology (see docker-compose.yml). */
async function main() {
  let config;
  try {
    config = loadConfig();
    if (!config.temporal.address) throw new ConfigError('TEMPORAL_ADDRESS: required when the worker runs on its own');
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(2);
  }
  const logger = createLogger(config.logLevel, 'detflow-worker');
  // Before any connection to Temporal: the SDK's logs through ours, and its metrics when asked for.
  installTemporalRuntime(logger, { sdkMetricsAddress: config.temporalMetricsAddress });
  const secrets = SecretBox.fromConfig(config);
  const metrics = createServiceMetrics();
  const siem = await openSiemAdapters({
    dataDir: config.dataDir,
    openSecret: (sealed) => secrets.open(sealed),
    eventStore: { memoryLimit: config.eventStoreMemoryLimit, maxPendingBatches: config.ingestMaxPendingBatches },
  });
  const memorySampler = startMemorySampler({ metrics, eventStoreBytes: () => siem.localStore.memoryBytes(), logger });
  const database = await openDatabase(databaseOptionsFromConfig(config));
  await database.migrate();
  const adopted = await adoptUntargetedEvents(database.db, siem);
  if (adopted > 0) logger.info({ events: adopted }, "events stored before events had a target now belong to their tenant's built-in local target");
  const client = await connectClient(config.temporal.address!, config.temporal.namespace);
  await ensureSearchAttributes(client, config.temporal.namespace);
  const { worker, connection } = await createWorker({
    address: config.temporal.address!,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    db: database.db,
    logger,
    secrets,
    siem,
    client,
    metrics,
    driftCheckMinutes: config.driftCheckMinutes,
    webhookRetry: config.webhookRetry,
    detectionSchedules: config.detectionSchedules,
  });
  // This worker's own metrics (detection runs, alerts, webhook deliveries), when a port is given.
  const metricsServer =
    config.workerMetricsPort === undefined ? undefined : await startMetricsServer(metrics, { host: config.host, port: config.workerMetricsPort, token: config.metricsToken });
  if (metricsServer) logger.info({ url: metricsServer.url }, 'worker metrics listening');
  // The SDK's exporter is bound by now: the runtime starts with the first native connection.
  if (config.temporalMetricsAddress) logger.info({ url: `http://${config.temporalMetricsAddress}/metrics` }, 'Temporal SDK metrics listening');
  // Worker.run installs its own SIGINT/SIGTERM handling and drains in-flight tasks.
  await worker.run();
  await metricsServer?.close();
  await memorySampler.stop();
  await connection.close();
  await client.connection.close();
  await database.close();
  await siem.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`detflow worker failed: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
