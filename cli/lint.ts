import fs from 'node:fs';
import { lintForTarget, type LintReport } from '../sigma/lint/for-target';
import type { TargetKind } from '../sigma';
import { isContentRejection, type ApiClient } from './api-client';
import { mapConcurrent } from './concurrency';

/** One rule file's lint: the service's (or the in-process engine's) report, or why there is none. */
export type FileLint = { file: string; seconds: number } & ({ ok: true; report: LintReport } | { ok: false; error: string });

/** Enough requests in flight to hide the round trip, few enough not to crowd a shared service. */
const CONCURRENT_REQUESTS = 8;

/** Lints each file through the service, for one of the tenant's targets. */
export function lintThroughApi(client: ApiClient, files: readonly string[], target: string): Promise<FileLint[]> {
  return mapConcurrent(files, CONCURRENT_REQUESTS, async (file): Promise<FileLint> => {
    const rule = fs.readFileSync(file, 'utf8');
    const started = performance.now();
    try {
      const { body } = await client.request<LintReport>('POST', '/rules/lint', { rule, target });
      return { file, seconds: (performance.now() - started) / 1000, ok: true, report: body };
    } catch (err) {
      if (isContentRejection(err)) return { file, seconds: (performance.now() - started) / 1000, ok: false, error: err.message };
      throw err;
    }
  });
}

/**
 * Lints each file with the engine in this process (a pre-commit hook needs no service). The same
 * function the API calls, so offline findings (codes and positions) equal the service's for a target of that kind.
 */
export function lintOffline(files: readonly string[], kind: TargetKind): FileLint[] {
  return files.map((file) => {
    const text = fs.readFileSync(file, 'utf8');
    const started = performance.now();
    const report = lintForTarget(text, { name: 'offline', kind });
    return { file, seconds: (performance.now() - started) / 1000, ok: true, report };
  });
}
