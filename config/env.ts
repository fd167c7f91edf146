import path from 'node:path';
import { z } from 'zod';

/**
 * All configuration is environment variables, parsed once at start. A bad value stops the process
 * with a message naming the variable, so a typo never silently falls back to a default.
 */
const port = z.coerce.number().int().min(0).max(65535);
const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v));

export const TIERS = ['free', 'professional', 'enterprise', 'unlimited'] as const;
export type Tier = (typeof TIERS)[number];

const envSchema = z.object({
  PORT: port.default(8080),
  HOST: z.string().default('127.0.0.1'),
  DATA_DIR: z.string().default('./data'),
  DATABASE_URL: optionalString.pipe(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_TASK_QUEUE: z.string().min(1).default('detflow'),
  TEMPORAL_CLI_PATH: optionalString,
  TEMPORAL_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  // The embedded dev server's first restart wait after it ends; doubled at each quick new exit, up to 30 s.
  DETFLOW_TEMPORAL_RESTART_SECONDS: z.coerce.number().min(0.1).max(30).default(1),
  // How long a SIGTERM lets requests and activity attempts in flight finish before cutting them.
  DETFLOW_SHUTDOWN_GRACE_SECONDS: z.coerce.number().int().min(0).max(300).default(10),
  TEMPORAL_UI_URL: optionalString,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DETFLOW_BOOTSTRAP_TOKEN: optionalString,
  DETFLOW_SECRET_KEY: optionalString,
  DETFLOW_DEFAULT_TIER: z.enum(TIERS).default('enterprise'),
  DETFLOW_BODY_LIMIT: z
    .string()
    .regex(/^\d+(b|kb|mb)$/i, 'a size such as 1mb or 512kb')
    .default('5mb'),
  DETFLOW_PUBLIC_URL: optionalString,
  DETFLOW_INGEST_LIMIT_MB: z.coerce.number().int().min(1).max(4096).default(256),
  DETFLOW_MAX_EVENT_KB: z.coerce.number().int().min(1).max(65536).default(1024),
  DETFLOW_BODY_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(3600).default(300),
  DETFLOW_METRICS_TOKEN: optionalString,
  DETFLOW_WORKER_METRICS_PORT: z.preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), port.optional()),
  DETFLOW_BACKUP_DIR: optionalString,
  DETFLOW_DRIFT_CHECK_MINUTES: z.coerce.number().int().min(1).max(1440).default(15),
  DETFLOW_PGLITE_VACUUM_MINUTES: z.coerce.number().int().min(1).max(1440).default(5),
  // 0: off. Otherwise the embedded database's busiest statements are logged every N minutes.
  DETFLOW_PGLITE_STATEMENT_STATS_MINUTES: z.coerce.number().int().min(0).max(1440).default(0),
  // DuckDB's memory for the local event store (its default is 80% of the machine's RAM).
  DETFLOW_EVENT_STORE_MEMORY_LIMIT: z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i, 'a size such as 512MB or 2GB')
    .default('1GB'),
  DETFLOW_INGEST_MAX_PENDING_BATCHES: z.coerce.number().int().min(0).max(100_000).default(32),
  // One detection schedule per tenant and local target (a pass over every live rule), or one per deployment.
  DETFLOW_DETECTION_SCHEDULES: z.enum(['per-target', 'per-deployment']).default('per-target'),
  // Webhook retries: the first wait, doubled at each failed attempt up to the longest, for so many attempts.
  DETFLOW_WEBHOOK_RETRY_FIRST_SECONDS: z.coerce.number().min(0.01).max(3600).default(1),
  DETFLOW_WEBHOOK_RETRY_MAX_SECONDS: z.coerce.number().min(0.01).max(86400).default(300),
  DETFLOW_WEBHOOK_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(1000).default(20),
  DETFLOW_TEMPORAL_METRICS_ADDRESS: optionalString.pipe(
    z
      .string()
      .regex(/^(\[[0-9a-fA-F:.]+\]|[^\s:[\]]+):\d{1,5}$/, 'host:port, e.g. 0.0.0.0:9465')
      .refine((v) => Number(v.slice(v.lastIndexOf(':') + 1)) <= 65535, 'a port up to 65535')
      .optional(),
  ),
});

export type AppConfig = {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  temporal: {
    address: string | undefined;
    namespace: string;
    taskQueue: string;
    cliPath: string | undefined;
    port: number;
    uiPort: number;
    uiUrl: string | undefined;
    restartSeconds: number;
  };
  shutdownGraceSeconds: number;
  logLevel: z.infer<typeof envSchema>['LOG_LEVEL'];
  bootstrapToken: string | undefined;
  secretKey: string | undefined;
  defaultTier: Tier;
  bodyLimit: string;
  publicUrl: string | undefined;
  /** Largest event upload of one request, in bytes. */
  ingestLimitBytes: number;
  /** Largest single event (an NDJSON line, a JSON array element), in bytes: a larger one is rejected by its line number. */
  maxEventBytes: number;
  /** How long a request body may take to arrive, from the request's headers on: later is a 408 problem. */
  bodyTimeoutSeconds: number;
  /** When set, GET /metrics needs `Authorization: Bearer <it>`; otherwise /metrics is open like /healthz. */
  metricsToken: string | undefined;
  /** Where the worker run on its own (worker/main.ts) serves /metrics; it serves none when unset. */
  workerMetricsPort: number | undefined;
  /** `host:port` where the Temporal SDK serves its own worker metrics (Prometheus); off when unset. */
  temporalMetricsAddress: string | undefined;
  /** How often the scheduled drift check compares every target with what detflow deployed there. */
  driftCheckMinutes: number;
  /** Embedded default only: how often the service vacuums and analyzes its PGlite database (PGlite has no autovacuum). */
  pgliteVacuumMinutes: number;
  /** Embedded default only: minutes between reports of the busiest statements (pg_stat_statements); 0 is off. */
  pgliteStatementStatsMinutes: number;
  /** The local event store's DuckDB memory limit (DuckDB's own syntax, e.g. `1GB`). */
  eventStoreMemoryLimit: string;
  /** Ingest batches under way at once before more are answered 503 (0: no limit). */
  ingestMaxPendingBatches: number;
  /** Scheduled detection: one schedule per tenant and local target (`per-target`) or per deployment (decision record 0084). */
  detectionSchedules: 'per-target' | 'per-deployment';
  /** How a webhook delivery is retried before it is marked `failed` (re-sendable from the API). */
  webhookRetry: WebhookRetry;
  /** Where `POST /settings/backup` writes backups (DETFLOW_BACKUP_DIR, default DATA_DIR/backups). */
  backupDir: string;
};

export type WebhookRetry = { firstSeconds: number; maxSeconds: number; maxAttempts: number };

/** About an hour of retries: a receiver down for a maintenance window still gets every event. */
export const DEFAULT_WEBHOOK_RETRY: WebhookRetry = { firstSeconds: 1, maxSeconds: 300, maxAttempts: 20 };

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: path.resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      cliPath: e.TEMPORAL_CLI_PATH,
      port: e.TEMPORAL_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
      uiUrl: e.TEMPORAL_UI_URL,
      restartSeconds: e.DETFLOW_TEMPORAL_RESTART_SECONDS,
    },
    shutdownGraceSeconds: e.DETFLOW_SHUTDOWN_GRACE_SECONDS,
    logLevel: e.LOG_LEVEL,
    bootstrapToken: e.DETFLOW_BOOTSTRAP_TOKEN,
    secretKey: e.DETFLOW_SECRET_KEY,
    defaultTier: e.DETFLOW_DEFAULT_TIER,
    bodyLimit: e.DETFLOW_BODY_LIMIT,
    publicUrl: e.DETFLOW_PUBLIC_URL,
    ingestLimitBytes: e.DETFLOW_INGEST_LIMIT_MB * 1024 * 1024,
    maxEventBytes: e.DETFLOW_MAX_EVENT_KB * 1024,
    bodyTimeoutSeconds: e.DETFLOW_BODY_TIMEOUT_SECONDS,
    metricsToken: e.DETFLOW_METRICS_TOKEN,
    workerMetricsPort: e.DETFLOW_WORKER_METRICS_PORT,
    temporalMetricsAddress: e.DETFLOW_TEMPORAL_METRICS_ADDRESS,
    driftCheckMinutes: e.DETFLOW_DRIFT_CHECK_MINUTES,
    pgliteVacuumMinutes: e.DETFLOW_PGLITE_VACUUM_MINUTES,
    pgliteStatementStatsMinutes: e.DETFLOW_PGLITE_STATEMENT_STATS_MINUTES,
    eventStoreMemoryLimit: e.DETFLOW_EVENT_STORE_MEMORY_LIMIT,
    ingestMaxPendingBatches: e.DETFLOW_INGEST_MAX_PENDING_BATCHES,
    detectionSchedules: e.DETFLOW_DETECTION_SCHEDULES,
    backupDir: path.resolve(e.DETFLOW_BACKUP_DIR ?? path.join(e.DATA_DIR, 'backups')),
    webhookRetry: {
      firstSeconds: e.DETFLOW_WEBHOOK_RETRY_FIRST_SECONDS,
      maxSeconds: Math.max(e.DETFLOW_WEBHOOK_RETRY_FIRST_SECONDS, e.DETFLOW_WEBHOOK_RETRY_MAX_SECONDS),
      maxAttempts: e.DETFLOW_WEBHOOK_MAX_ATTEMPTS,
    },
  };
}
