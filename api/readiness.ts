import type { Request, Response } from 'express';
import type { DependencyMonitor } from '../lib/dependency-monitor';

/**
 * GET /readyz: answered from the dependency monitor's last probes, so it answers at once whatever
 * the dependencies do: 200, or 503 naming each dependency that is down, since when and why.
 * `checks` keeps the shape orchestrators' scripts already read.
 */
export function readinessEndpoint(monitor: DependencyMonitor) {
  return (_req: Request, res: Response) => {
    const states = monitor.snapshot();
    const dependencies = Object.fromEntries(
      Object.entries(states).map(([name, s]) => [name, { status: s.up ? 'up' : 'down', since: s.since.toISOString(), ...(s.error ? { error: s.error } : {}) }]),
    );
    const checks = Object.fromEntries(Object.entries(states).map(([name, s]) => [name, s.up ? 'ok' : `error: ${s.error ?? 'down'}`]));
    const down = Object.entries(states)
      .filter(([, s]) => !s.up)
      .map(([name]) => name);
    res
      .status(down.length === 0 ? 200 : 503)
      .set('Cache-Control', 'no-store')
      .json({ status: down.length === 0 ? 'ready' : 'not_ready', ...(down.length > 0 ? { down } : {}), checks, dependencies });
  };
}
