/** Where a command writes and what environment it reads; tests pass their own. */
export type Io = { out: (s: string) => void; err: (s: string) => void; env: NodeJS.ProcessEnv };

/** Exit codes a CI job can branch on. */
export const EXIT = {
  ok: 0,
  /** Lint errors, failed tests, rules or fixtures the service refused. */
  failed: 1,
  /** Bad usage or configuration, or the service could not be used (unreachable, token refused). */
  unusable: 2,
} as const;

/** A mistake in how the command was called; exits with EXIT.unusable. */
export class UsageError extends Error {
  override name = 'UsageError';
}
