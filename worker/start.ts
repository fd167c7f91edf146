import path from 'node:path';
import { loadConfig, ConfigError } from '../config/env';
import { SecretBox } from '../config/secret-box';
import { openSiemAdapters } from '../siem/adapters';
import { createLogger } from '../config/logger';
import { installTemporalRuntime } from './temporal-runtime';
import { databaseOptionsFromConfig, openDatabase } from '../db/client';
import { ensureBootstrap } from '../domain/tenants/tenant-service';
import { adoptUntargetedEvents } from '../domain/targets/untargeted-events';
import { startApi } from '../api/server';
import { resolveTemporalCli } from './temporal-cli';
import { superviseTemporalDevServer, type SupervisedDevServer } from './supervised-dev-server';
import { connectClient, ensureSearchAttributes, probeTemporal } from './temporal-client';
import { DependencyMonitor } from '../lib/dependency-monitor';
import { createWorker } from './create-worker';
import { createServiceMetrics } from '../lib/metrics/service-metrics';
import { startMemorySampler } from './memory-sampler';
import { backupTaker } from './backup';
import { startPeriodicVacuum } from './pglite-vacuum';
import { startStatementStatsReports } from './pglite-statement-stats';

/**
 * `npm start`: the whole service in one process on the embedded defaults — the Temporal dev server
 * (unless TEMPORAL_ADDRESS is set), the database (PGlite unless DATABASE_URL is set), the worker and
 * the API.
 */
async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    process.stderr.write(`${err instanceof ConfigError ? err.message : String(err)}\n`);
    process.exit(2);
  }
  const logger = createLogger(config.logLevel);
  // Before any connection to Temporal: the SDK's logs through ours, and its metrics when asked for.
  installTemporalRuntime(logger, { sdkMetricsAddress: config.temporalMetricsAddress }, { ownSignals: true });
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) {
      try {
        await stop();
      } catch (err) {
        logger.error({ err }, 'error while stopping');
      }
    }
  };

  try {
    let address = config.temporal.address;
    let uiUrl = config.temporal.uiUrl;
    let devServer: SupervisedDevServer | undefined;
    if (!address) {
      const cliPath = resolveTemporalCli({ cliPath: config.temporal.cliPath, log: (m) => logger.info(m) });
      devServer = await superviseTemporalDevServer(
        {
          cliPath,
          port: config.temporal.port,
          uiPort: config.temporal.uiPort,
          dbFile: path.join(config.dataDir, 'temporal', 'temporal.db'),
          namespace: config.temporal.namespace,
          logFile: path.join(config.dataDir, 'temporal', 'server.log'),
        },
        logger,
        { initialMs: config.temporal.restartSeconds * 1000, maxMs: 30_000, healthyAfterMs: 60_000 },
      );
      stops.push(() => devServer!.stop());
      address = devServer.address;
      uiUrl ??= devServer.uiUrl;
    }

    const secrets = SecretBox.fromConfig(config);
    // One registry for the process: the worker's activities and the API count into it, /metrics shows all.
    const metrics = createServiceMetrics();
    const siem = await openSiemAdapters({
      dataDir: config.dataDir,
      openSecret: (sealed) => secrets.open(sealed),
      eventStore: { memoryLimit: config.eventStoreMemoryLimit, maxPendingBatches: config.ingestMaxPendingBatches },
    });
    stops.push(() => siem.close());
    const memorySampler = startMemorySampler({ metrics, eventStoreBytes: () => siem.localStore.memoryBytes(), logger });
    // Before the event store closes (stops run last first).
    stops.push(() => memorySampler.stop());
    const database = await openDatabase(databaseOptionsFromConfig(config));
    stops.push(() => database.close());
    await database.migrate();
    if (database.vacuum) {
      const vacuum = startPeriodicVacuum({ vacuum: database.vacuum }, { everyMs: config.pgliteVacuumMinutes * 60_000, logger });
      // Before the database closes (stops run last first).
      stops.push(() => vacuum.stop());
    }
    if (database.takeStatementStats && config.pgliteStatementStatsMinutes > 0) {
      const reporter = startStatementStatsReports({ takeStatementStats: database.takeStatementStats }, { everyMs: config.pgliteStatementStatsMinutes * 60_000, logger });
      // Before the database closes (stops run last first).
      stops.push(() => reporter.stop());
    }
    const bootstrapToken = await ensureBootstrap(database.db, { tier: config.defaultTier, token: config.bootstrapToken });
    const adopted = await adoptUntargetedEvents(database.db, siem);
    if (adopted > 0) logger.info({ events: adopted }, "events stored before events had a target now belong to their tenant's built-in local target");

    // What /readyz reports, and what lets the API refuse at once what needs a dependency that is away.
    const readiness = new DependencyMonitor({
      onChange: (name, state) =>
        state.up ? logger.info({ dependency: name }, `${name} is available again`) : logger.error({ dependency: name, error: state.error }, `${name} is unavailable`),
    });
    readiness.addProbe('database', () => database.ping());
    readiness.addProbe('event_store', async () => {
      await siem.localStore.latestCursor();
    });
    const client = await connectClient(address, config.temporal.namespace, {
      isDown: () => readiness.isDown('temporal'),
      describeDown: () => {
        const state = readiness.state('temporal');
        return `Temporal has been unavailable since ${state?.since.toISOString()}${state?.error ? ` (${state.error})` : ''}`;
      },
    });
    stops.push(() => client.connection.close());
    readiness.addProbe('temporal', () => probeTemporal(client, 2_000));
    await readiness.start();
    stops.push(async () => readiness.stop());
    if (!devServer) await ensureSearchAttributes(client, config.temporal.namespace);

    const { worker, connection } = await createWorker({
      address,
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
      shutdownGraceMs: config.shutdownGraceSeconds * 1000,
    });
    const workerDone = worker.run();
    stops.push(async () => {
      worker.shutdown();
      await workerDone;
      await connection.close();
    });

    const api = await startApi(
      {
        config,
        database,
        logger,
        secrets,
        siem,
        temporal: { client, namespace: config.temporal.namespace, taskQueue: config.temporal.taskQueue, uiUrl },
        metrics,
        readiness,
        ...(database.kind === 'pglite'
          ? { backup: backupTaker({ dataDir: config.dataDir, backupsDir: config.backupDir, database, localStore: siem.localStore, devServer }) }
          : {}),
      },
      config.host,
      config.port,
    );
    stops.push(() => api.close(config.shutdownGraceSeconds * 1000));

    const lines = [
      '',
      'detflow is running',
      `  API:           ${api.url}/api/v1   (OpenAPI 3.0.3: ${api.url}/api/v1/openapi.json, 3.1: ${api.url}/api/v1/openapi-3.1.json)`,
      `  Console:       ${api.url}/   (sign in with an API token)`,
      `  API reference: ${api.url}/docs`,
      `  Metrics:       ${api.url}/metrics${config.metricsToken ? '   (bearer DETFLOW_METRICS_TOKEN)' : ''}`,
      ...(config.temporalMetricsAddress ? [`  SDK metrics:   http://${config.temporalMetricsAddress}/metrics   (the Temporal worker's own)`] : []),
      `  Temporal UI:   ${uiUrl ?? '(not known: set TEMPORAL_UI_URL)'}`,
      `  Temporal:      ${address} (namespace ${config.temporal.namespace}, task queue ${config.temporal.taskQueue})`,
      `  Database:      ${database.kind === 'pglite' ? `PGlite in ${path.join(config.dataDir, 'pglite')}` : 'PostgreSQL (DATABASE_URL)'}`,
    ];
    if (bootstrapToken) {
      lines.push('', `  Bootstrap admin token (shown once, keep it safe): ${bootstrapToken}`);
    }
    process.stdout.write(lines.join('\n') + '\n\n');

    let stopping = false;
    const onSignal = (signal: string) => {
      if (stopping) return;
      stopping = true;
      logger.info({ signal }, 'shutting down');
      void stopAll().then(() => process.exit(0));
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
    workerDone.catch(async (err: unknown) => {
      logger.fatal({ err }, 'the worker stopped with an error');
      await stopAll();
      process.exit(1);
    });
  } catch (err) {
    logger.fatal({ err }, 'detflow failed to start');
    await stopAll();
    process.exit(1);
  }
}

void main();
