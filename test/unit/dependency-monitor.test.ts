import { DependencyMonitor } from '../../lib/dependency-monitor';

describe('dependency monitor', () => {
  it('keeps since when a dependency went down, takes the latest reason, and reports each change once', async () => {
    let clock = new Date('2026-11-27T10:00:00Z');
    let failing: string | undefined;
    const changes: string[] = [];
    const monitor = new DependencyMonitor({
      now: () => clock,
      timeoutMs: 50,
      probes: {
        database: async () => {
          if (failing) throw new Error(failing);
        },
      },
      onChange: (name, s) => changes.push(`${name} ${s.up ? 'up' : 'down'} ${s.since.toISOString()}`),
    });
    await monitor.probeAll();
    expect(monitor.isDown('database')).toBe(false);

    failing = 'connection refused';
    clock = new Date('2026-11-27T10:01:00Z');
    await monitor.probeAll();
    failing = 'still refused';
    clock = new Date('2026-11-27T10:02:00Z');
    await monitor.probeAll();
    expect(monitor.state('database')).toEqual({ up: false, since: new Date('2026-11-27T10:01:00Z'), error: 'still refused' });

    failing = undefined;
    clock = new Date('2026-11-27T10:03:00Z');
    await monitor.probeAll();
    expect(monitor.state('database')).toEqual({ up: true, since: new Date('2026-11-27T10:03:00Z') });
    expect(changes).toEqual(['database down 2026-11-27T10:01:00.000Z', 'database up 2026-11-27T10:03:00.000Z']);
  });

  it('counts a probe that does not answer within the timeout as down', async () => {
    const monitor = new DependencyMonitor({ timeoutMs: 30, probes: { temporal: () => new Promise<void>(() => undefined) } });
    await monitor.probeAll();
    expect(monitor.state('temporal')).toMatchObject({ up: false, error: 'no answer within 30 ms' });
  });

  it('takes a failure seen by a caller at once, before the next probe', () => {
    const monitor = new DependencyMonitor({ probes: { temporal: async () => undefined } });
    monitor.markDown('temporal', 'UNAVAILABLE');
    expect(monitor.isDown('temporal')).toBe(true);
    expect(monitor.snapshot().temporal?.error).toBe('UNAVAILABLE');
  });
});
