import { formatSummary, runFaultTrials, SCENARIOS } from '../../bench/faults';
import { testDbKind } from '../support/harness';

/**
 * The fault-injection suite's short run (the full one is `npm run bench:faults`): API and worker as
 * separate processes on PostgreSQL, `kill -9` of one of them at a random moment of each scenario,
 * the client retrying with the same Idempotency-Key; no effect lost, none twice.
 */
const TRIALS = Number(process.env.DETFLOW_FAULT_TRIALS ?? SCENARIOS.length);

(testDbKind() === 'postgres' ? describe : describe.skip)('fault injection (short run)', () => {
  it(`survives kill -9 of the worker or the API in ${TRIALS} trials with every effect exactly once`, async () => {
    const lines: string[] = [];
    const summary = await runFaultTrials({ trials: TRIALS, seed: Number(process.env.DETFLOW_FAULT_SEED ?? 18), log: (line) => lines.push(line) });
    const report = `${lines.join('\n')}\n${formatSummary(summary)}`;
    expect({ failedTrials: summary.failedTrials, duplicates: summary.duplicates, losses: summary.losses, report }).toEqual({
      failedTrials: 0,
      duplicates: 0,
      losses: 0,
      report,
    });
    expect(summary.trials).toBe(TRIALS);
    // Every trial counted something: an empty count would pass 0 and 0 vacuously.
    expect(summary.results.every((r) => r.effects.length >= 2 && r.effects.every((e) => e.expected >= 1))).toBe(true);
    expect(summary.found).toBe(summary.expected);
  }, 900_000);
});
