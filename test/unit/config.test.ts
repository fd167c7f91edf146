import { ConfigError, loadConfig } from '../../config/env';
import { nextUtcMidnight, utcDay } from '../../api/limits/rate-limit';

describe('configuration from the environment', () => {
  it('applies the documented defaults', () => {
    const c = loadConfig({});
    expect(c.port).toBe(8080);
    expect(c.temporal).toMatchObject({ port: 7233, uiPort: 8233, namespace: 'default', taskQueue: 'detflow', address: undefined });
    expect(c.databaseUrl).toBeUndefined();
    expect(c.dataDir).toMatch(/data$/);
  });

  it('stops with a message naming each bad variable', () => {
    expect(() => loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud' })).toThrow(ConfigError);
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud' });
    } catch (err) {
      expect((err as Error).message).toMatch(/PORT/);
      expect((err as Error).message).toMatch(/DATABASE_URL/);
      expect((err as Error).message).toMatch(/LOG_LEVEL/);
    }
  });

  it('caps one event at DETFLOW_MAX_EVENT_KB and a body at DETFLOW_BODY_TIMEOUT_SECONDS, within their bounds', () => {
    expect(loadConfig({})).toMatchObject({ maxEventBytes: 1024 * 1024, bodyTimeoutSeconds: 300 });
    expect(loadConfig({ DETFLOW_MAX_EVENT_KB: '64', DETFLOW_BODY_TIMEOUT_SECONDS: '30' })).toMatchObject({ maxEventBytes: 64 * 1024, bodyTimeoutSeconds: 30 });
    for (const bad of [{ DETFLOW_MAX_EVENT_KB: '0' }, { DETFLOW_MAX_EVENT_KB: '65537' }, { DETFLOW_BODY_TIMEOUT_SECONDS: '0' }, { DETFLOW_BODY_TIMEOUT_SECONDS: '3601' }]) {
      expect(() => loadConfig(bad)).toThrow(new RegExp(Object.keys(bad)[0]!));
    }
  });

  it('retries webhooks for about an hour by default, on a schedule DETFLOW_WEBHOOK_* can shorten', () => {
    expect(loadConfig({}).webhookRetry).toEqual({ firstSeconds: 1, maxSeconds: 300, maxAttempts: 20 });
    expect(loadConfig({ DETFLOW_WEBHOOK_RETRY_FIRST_SECONDS: '0.2', DETFLOW_WEBHOOK_RETRY_MAX_SECONDS: '2', DETFLOW_WEBHOOK_MAX_ATTEMPTS: '5' }).webhookRetry).toEqual({
      firstSeconds: 0.2,
      maxSeconds: 2,
      maxAttempts: 5,
    });
    // A longest wait below the first is raised to it rather than shortening the first.
    expect(loadConfig({ DETFLOW_WEBHOOK_RETRY_FIRST_SECONDS: '10', DETFLOW_WEBHOOK_RETRY_MAX_SECONDS: '1' }).webhookRetry.maxSeconds).toBe(10);
    for (const bad of [{ DETFLOW_WEBHOOK_MAX_ATTEMPTS: '0' }, { DETFLOW_WEBHOOK_MAX_ATTEMPTS: '2.5' }, { DETFLOW_WEBHOOK_RETRY_FIRST_SECONDS: 'soon' }]) {
      expect(() => loadConfig(bad)).toThrow(new RegExp(Object.keys(bad)[0]!));
    }
  });

  it('writes backups under DATA_DIR/backups unless DETFLOW_BACKUP_DIR says elsewhere', () => {
    expect(loadConfig({ DATA_DIR: '/srv/detflow' }).backupDir).toBe('/srv/detflow/backups');
    expect(loadConfig({ DATA_DIR: '/srv/detflow', DETFLOW_BACKUP_DIR: '/mnt/backups' }).backupDir).toBe('/mnt/backups');
  });

  it('treats an empty DATABASE_URL as unset', () => {
    expect(loadConfig({ DATABASE_URL: '' }).databaseUrl).toBeUndefined();
    expect(loadConfig({ DATABASE_URL: 'postgres://u@h:5432/db' }).databaseUrl).toBe('postgres://u@h:5432/db');
  });
});

describe('rate-limit day boundaries', () => {
  it('resets at the next UTC midnight', () => {
    const at = new Date('2026-12-31T23:59:59.500Z');
    expect(utcDay(at)).toBe('2026-12-31');
    expect(nextUtcMidnight(at)).toBe(Date.parse('2027-01-01T00:00:00Z') / 1000);
  });
});
