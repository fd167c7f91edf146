import { ApiError, newIdempotencyKey, type ApiClient } from './api-client';
import { EXIT, type Io } from './io';
import { Deadline, waitForDeployment, type DeploymentView } from './wait';

export type RollbackOptions = { target: string; reason: string; toVersion?: number; wait?: boolean; timeout: number; format: 'text' | 'json' };

type RollbackStarted = {
  id: string;
  workflow_id: string;
  from_version: number;
  /** null: no earlier version, the rule is taken off the target. */
  restores_version: number | null;
  links: { self: string; restored?: string; run?: string };
};

const idOf = (link: string) => link.split('/').at(-1)!;

/**
 * Starts a rollback; with --wait, follows it to the end: the restored version's deployment active,
 * or — when there is no earlier version — the live one retired as rolled back.
 */
export async function rollbackCommand(io: Io, unretried: ApiClient, ruleId: string, options: RollbackOptions): Promise<number> {
  const json = options.format === 'json';
  // With --wait, the --timeout covers submitting and waiting, and a restart of the service within it is retried.
  const deadline = options.wait ? new Deadline(options.timeout) : undefined;
  const client = deadline ? unretried.retrying(deadline, io.err) : unretried;
  const progress = json ? io.err : io.out;
  let started: RollbackStarted;
  try {
    started = (
      await client.request<RollbackStarted>(
        'POST',
        '/rules/rollback',
        {
          rule_id: ruleId,
          target: options.target,
          reason: options.reason,
          ...(options.toVersion !== undefined ? { to_version: options.toVersion } : {}),
        },
        { idempotencyKey: newIdempotencyKey() },
      )
    ).body;
  } catch (err) {
    // Nothing deployed, or the version asked for is the live one: the rollback cannot happen, an outcome.
    if (!(err instanceof ApiError && err.status === 409)) throw err;
    const reason = err.problem?.detail ?? err.message;
    if (json) io.out(JSON.stringify({ rule_id: ruleId, target: options.target, ok: false, error: reason }, null, 2) + '\n');
    else io.out(`not rolled back ${ruleId} on ${options.target}: ${reason}\n`);
    return EXIT.failed;
  }

  const to = started.restores_version === null ? 'removed from the target' : `v${started.restores_version}`;
  progress(`rollback  ${ruleId} on ${options.target}: v${started.from_version} → ${to} (${options.reason})\n`);
  if (started.links.run) progress(`run       ${started.links.run}\n`);
  if (!deadline) {
    if (json) io.out(JSON.stringify(started, null, 2) + '\n');
    return EXIT.ok;
  }

  let result: DeploymentView;
  let completed: boolean;
  if (started.links.restored) {
    // The restored version has its own deployment; it is `deploying` until the run activates it.
    result = await waitForDeployment(client, idOf(started.links.restored), deadline, (d) => d.status !== 'deploying');
    completed = result.status === 'active';
  } else {
    // Nothing to restore: the live deployment stays `active` until the run retires it.
    result = await waitForDeployment(client, idOf(started.links.self), deadline, (d) => d.status !== 'active');
    completed = result.status === 'rolled_back';
  }
  if (json) {
    io.out(JSON.stringify({ ...started, completed, deployment: result }, null, 2) + '\n');
  } else if (!completed) {
    io.out(`failed    rollback of ${ruleId} on ${options.target}: deployment ${result.id} is ${result.status}${result.error ? `: ${result.error}` : ''}\n`);
  } else {
    io.out(
      started.restores_version === null
        ? `removed   ${ruleId} from ${options.target}: v${started.from_version} rolled back, no version is live\n`
        : `active    ${ruleId} v${result.version} is live again on ${options.target} (v${started.from_version} rolled back)\n`,
    );
  }
  return completed ? EXIT.ok : EXIT.failed;
}
