import { isSiemRequestError } from '../../siem/remote/errors';
import { adapterFor, TargetMisconfigured, UnsupportedTargetKind, type SiemAdapters } from '../../siem/adapters';
import type { TimeWindow } from '../../siem/adapter';
import type { DeploymentInScope } from './rule-health';

/**
 * What a remote SIEM itself reports of a rule it runs: its alerts (fired alerts, the alerts index,
 * incidents) and its scheduled runs, over the window. Local targets have none: their detection
 * runs and alerts are the service's own records, which the other figures read.
 */
export type SiemStatistics = {
  target: string;
  kind: string;
  alerts: number | null;
  alerts_per_day: Array<{ day: string; alerts: number }>;
  first_alert_at: string | null;
  last_alert_at: string | null;
  runs: number | null;
  failed_runs: number | null;
  last_run_at: string | null;
  last_error: string | null;
  /** Why a figure is null: the kind cannot report it, or the SIEM could not be asked now. */
  unavailable: string | null;
};

export async function siemStatistics(siem: SiemAdapters, tenantId: string, ruleId: string, live: readonly DeploymentInScope[], window: TimeWindow): Promise<SiemStatistics[]> {
  const remote = live.filter((d) => d.targetKind !== 'local');
  const seen = new Set<string>();
  const out: SiemStatistics[] = [];
  for (const d of remote) {
    if (seen.has(d.targetId)) continue;
    seen.add(d.targetId);
    const base: SiemStatistics = {
      target: d.target,
      kind: d.targetKind,
      alerts: null,
      alerts_per_day: [],
      first_alert_at: null,
      last_alert_at: null,
      runs: null,
      failed_runs: null,
      last_run_at: null,
      last_error: null,
      unavailable: null,
    };
    try {
      const adapter = adapterFor(siem, { id: d.targetId, name: d.target, kind: d.targetKind, connection: d.targetConnection });
      const caps = adapter.capabilities();
      const [a, r] = await Promise.all([
        caps.alertStats ? adapter.alertStats(tenantId, ruleId, window) : null,
        caps.runStats ? adapter.runStats(tenantId, ruleId, window) : null,
      ]);
      const missing = [...(a ? [] : ['alerts']), ...(r ? [] : ['runs'])];
      out.push({
        ...base,
        ...(a
          ? { alerts: a.alerts, alerts_per_day: [...a.perDay], first_alert_at: a.firstAlertAt?.toISOString() ?? null, last_alert_at: a.lastAlertAt?.toISOString() ?? null }
          : {}),
        ...(r ? { runs: r.runs, failed_runs: r.failedRuns, last_run_at: r.lastRunAt?.toISOString() ?? null, last_error: r.lastError } : {}),
        unavailable: missing.length ? `${d.targetKind} targets do not report ${missing.join(' or ')}` : null,
      });
    } catch (err) {
      // The report still answers when one SIEM cannot be asked; it says why that part is missing.
      if (!isSiemRequestError(err) && !(err instanceof TargetMisconfigured) && !(err instanceof UnsupportedTargetKind)) throw err;
      out.push({ ...base, unavailable: err.message });
    }
  }
  return out;
}
