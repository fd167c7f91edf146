import { ApiError, type ApiClient } from './api-client';
import { EXIT, type Io } from './io';
import type { ApprovalView } from './wait';

export type Decision = 'approve' | 'reject' | 'request_changes';

const DONE: Record<Decision, string> = { approve: 'approved', reject: 'rejected', request_changes: 'changes requested' };

/**
 * Records a reviewer's decision. An approval already decided (or expired) is an outcome, exit 1;
 * a decision this token may not make (its own change, no approve permission) or an unknown
 * approval is a misuse, exit 2, with the service's reason.
 */
export async function decideCommand(io: Io, client: ApiClient, approvalId: string, decision: Decision, comment: string | undefined, format: 'text' | 'json'): Promise<number> {
  let approval: ApprovalView;
  try {
    approval = (await client.request<ApprovalView>('POST', `/approvals/${approvalId}/decision`, { decision, ...(comment !== undefined ? { comment } : {}) })).body;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    const reason = err.problem?.detail ?? err.message;
    if (err.status === 409) {
      if (format === 'json') io.out(JSON.stringify({ id: approvalId, ok: false, error: reason }, null, 2) + '\n');
      else io.out(`not decided ${approvalId}: ${reason}\n`);
      return EXIT.failed;
    }
    // The generic hint for a 403 speaks of permissions only; a reviewer must also not be the requester.
    if (err.status === 403)
      throw new Error(
        `Cannot ${decision.replace('_', ' ')} ${approvalId}: ${reason}\n  A change is decided by a token with the approve permission other than the one that requested it.`,
      );
    throw err;
  }
  if (format === 'json') io.out(JSON.stringify(approval, null, 2) + '\n');
  else
    io.out(`${DONE[decision]} ${approval.id}: ${approval.rule_id} v${approval.version} → ${approval.targets.join(', ')}${approval.comment ? ` (${approval.comment})` : ''}\n`);
  return EXIT.ok;
}
