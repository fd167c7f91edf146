import { gradeLogsource, ruleNeeds } from '../../domain/health/data-quality';
import { errorRateOf } from '../../domain/health/error-rate';
import { DEFAULT_HEALTH_THRESHOLDS as T } from '../../domain/health/health-settings';
import { worsened } from '../../domain/health/health-watch';
import { noiseBudgetOf } from '../../domain/health/noise-budget';
import { snrOf } from '../../domain/health/snr';

describe('rule health figures', () => {
  it('SNR: no division by zero, duplicates and undispositioned alerts left out', () => {
    expect(snrOf({ truePositives: 3, falsePositives: 1, benign: 1, duplicates: 4, undispositioned: 9 })).toMatchObject({ ratio: 1.5, precision: 0.6, reason: null });
    expect(snrOf({ truePositives: 2, falsePositives: 0, benign: 0, duplicates: 0, undispositioned: 0 })).toMatchObject({
      ratio: null,
      precision: 1,
      reason: expect.stringMatching(/no denominator/),
    });
    expect(snrOf({ truePositives: 0, falsePositives: 0, benign: 0, duplicates: 1, undispositioned: 1 })).toMatchObject({ ratio: null, precision: null });
  });

  it('error rate: graded at the thresholds, no_data without a run', () => {
    expect(errorRateOf(0, 0, null, T)).toMatchObject({ rate: null, status: 'no_data' });
    expect(errorRateOf(100, 4, null, T)).toMatchObject({ rate: 0.04, status: 'ok' });
    expect(errorRateOf(100, 5, null, T)).toMatchObject({ status: 'degraded' });
    expect(errorRateOf(4, 1, null, T)).toMatchObject({ status: 'failing', reason: '1 of 4 detection runs failed (25%, failing at 25%)' });
  });

  it('noise budget: days over budget per deployment, consumption only against a budget', () => {
    const nb = noiseBudgetOf(
      [
        { deploymentId: 'a', day: '2026-01-01', alerts: 6, suppressed: 1 },
        { deploymentId: 'a', day: '2026-01-02', alerts: 5, suppressed: 0 },
        { deploymentId: 'b', day: '2026-01-02', alerts: 9, suppressed: 0 },
      ],
      [
        { deploymentId: 'a', target: 't', version: 1, maxAlertsPerDay: 5 },
        { deploymentId: 'b', target: 'u', version: 1, maxAlertsPerDay: null },
        { deploymentId: 'c', target: 'v', version: 2, maxAlertsPerDay: 0 },
      ],
      '2026-01-02',
      10,
    );
    expect(nb).toMatchObject({ alertsToday: 14, alerts: 20, alertsPerDay: 2, suppressed: 1, daysOverBudget: 1 });
    expect(nb.perDay).toEqual([
      { day: '2026-01-01', alerts: 6, suppressed: 1, overBudget: true },
      { day: '2026-01-02', alerts: 14, suppressed: 0, overBudget: false },
    ]);
    expect(nb.deployments.map((d) => d.consumptionToday)).toEqual([1, null, null]);
  });

  it('data quality: fields read from the parsed rule, graded by share and freshness', () => {
    const needs = ruleNeeds(
      [
        'title: t',
        'id: 00000000-0000-4000-8000-000000000001',
        'logsource:',
        '  product: windows',
        '  category: process_creation',
        'detection:',
        '  sel:',
        "    Image|endswith: '\\\\x.exe'",
        '    ParentImage|fieldref: Image',
        '  kw:',
        '    - evil',
        '  condition: sel or kw',
        '',
      ].join('\n'),
    )!;
    expect(needs).toEqual({ logsource: { product: 'windows', category: 'process_creation' }, fields: ['Image', 'ParentImage'] });
    const graded = gradeLogsource('local', needs, { events: 10, fields: { Image: 10, ParentImage: 4 }, newestEventTime: new Date(0) }, T);
    expect(graded.fields.map((f) => f.status)).toEqual(['ok', 'failing']);
    expect(graded).toMatchObject({
      status: 'failing',
      reason: 'only 4 of 10 events of `product: windows, category: process_creation` in the last 24 h carry `ParentImage` (40%)',
    });
    const stale = gradeLogsource('local', needs, { events: 0, fields: {}, newestEventTime: null }, T);
    expect(stale.reason).toBe('no event in the last 24 h carries `product: windows, category: process_creation` on target local (no event ever)');
    expect(ruleNeeds('not: [a rule')).toBeUndefined();
  });

  it('a grade worsens from ok (or never graded) to degraded or failing, and from degraded to failing', () => {
    expect([worsened(null, 'degraded'), worsened('ok', 'failing'), worsened('degraded', 'failing')]).toEqual([true, true, true]);
    expect([worsened('degraded', 'degraded'), worsened('failing', 'degraded'), worsened(null, 'ok')]).toEqual([false, false, false]);
  });
});
