/**
 * What a run says of itself in the Temporal UI: a one-line static summary (the run list) and
 * markdown static details (the run page), given by whoever starts it — the domain, a schedule, or a
 * workflow starting a child. Pure string building from what the starter already holds, so it is
 * safe in workflow code and never reads the database. Links are API paths relative to the server.
 */

export type RunMetadata = { staticSummary: string; staticDetails: string };

const API = '/api/v1';
/** Temporal's summary is one line; a long title or reason must not make it a wall of text. */
const SUMMARY_MAX = 200;

function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > SUMMARY_MAX ? `${flat.slice(0, SUMMARY_MAX - 1)}…` : flat;
}

/** Markdown table cell text: pipes and line breaks would break the row. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();
}

function details(heading: string, rows: Array<[string, string | number | null | undefined]>): string {
  const lines = rows.filter(([, v]) => v !== null && v !== undefined && v !== '').map(([k, v]) => `| ${k} | ${cell(String(v))} |`);
  return [`**${heading}**`, '', '| | |', '|---|---|', ...lines].join('\n');
}

function ruleLink(ruleId: string, version?: number | null): string {
  return version ? `[${ruleId}](${API}/rules/${ruleId}/versions/${version})` : `[${ruleId}](${API}/rules/${ruleId})`;
}

/** `‘title’` when the rule has one, else its id. */
function named(ruleId: string, title: string | null | undefined): string {
  return `‘${title?.trim() || ruleId}’`;
}

/** The `title:` of Sigma text (inline rules have no registry row); null when it has none. */
export function sigmaTitle(content: string): string | null {
  const match = /^title:\s*['"]?(.+?)['"]?\s*$/m.exec(content);
  return match?.[1] ?? null;
}

function askedBy(requestedBy: string, why?: string | null): string {
  return why?.trim() ? `(asked by ${requestedBy}: ${why.trim()})` : `(asked by ${requestedBy})`;
}

export function deployRunMetadata(d: {
  ruleId: string;
  title: string | null;
  version: number;
  targets: string[];
  requestedBy: string;
  approvalId: string | null;
  description?: string | null;
  link?: string | null;
  deploymentIds: string[];
}): RunMetadata {
  const verb = d.approvalId ? 'Deploy (needs approval)' : 'Deploy';
  return {
    staticSummary: oneLine(`${verb} ${named(d.ruleId, d.title)} v${d.version} → ${d.targets.join(', ')} ${askedBy(d.requestedBy, d.description)}`),
    staticDetails: details(d.approvalId ? 'Change waiting for a reviewer, then deployed' : 'Change deployed', [
      ['Rule', ruleLink(d.ruleId, d.version)],
      ['Title', d.title],
      ['Version', d.version],
      ['Targets', d.targets.join(', ')],
      ['Requested by', d.requestedBy],
      ['Description', d.description],
      ['Link', d.link],
      ['Approval', d.approvalId ? `[${d.approvalId}](${API}/approvals/${d.approvalId})` : 'not required'],
      ['Deployments', d.deploymentIds.map((id) => `[${id}](${API}/deployments/${id})`).join(', ')],
    ]),
  };
}

export function rollbackRunMetadata(r: {
  ruleId: string;
  title?: string | null;
  targetName: string;
  fromVersion: number;
  toVersion: number | null;
  requestedBy: string;
  reason: string;
  fromDeploymentId: string;
}): RunMetadata {
  const to = r.toVersion === null ? 'removed' : `v${r.toVersion}`;
  return {
    staticSummary: oneLine(`Roll back ${named(r.ruleId, r.title)} v${r.fromVersion} → ${to} on ${r.targetName} ${askedBy(r.requestedBy, r.reason)}`),
    staticDetails: details('Rollback', [
      ['Rule', ruleLink(r.ruleId)],
      ['Title', r.title],
      ['Target', r.targetName],
      ['From', `v${r.fromVersion} ([${r.fromDeploymentId}](${API}/deployments/${r.fromDeploymentId}))`],
      ['To', r.toVersion === null ? 'off the target' : `v${r.toVersion}`],
      ['Requested by', r.requestedBy],
      ['Reason', r.reason],
    ]),
  };
}

export function replayRunMetadata(r: {
  replayId: string;
  ruleId: string;
  title: string | null;
  version: number | null;
  targetName: string;
  windowFrom: string;
  windowTo: string;
  requestedBy: string;
}): RunMetadata {
  const version = r.version ? ` v${r.version}` : ' (inline)';
  return {
    staticSummary: oneLine(`Replay ${named(r.ruleId, r.title)}${version} on ${r.targetName}, ${r.windowFrom} → ${r.windowTo} ${askedBy(r.requestedBy)}`),
    staticDetails: details('Replay over stored events', [
      ['Rule', r.version ? ruleLink(r.ruleId, r.version) : `${r.ruleId} (inline rule)`],
      ['Title', r.title],
      ['Target', r.targetName],
      ['Window', `${r.windowFrom} → ${r.windowTo}`],
      ['Requested by', r.requestedBy],
      ['Replay', `[${r.replayId}](${API}/replays/${r.replayId})`],
    ]),
  };
}

export function shadowRunMetadata(s: {
  shadowId: string;
  ruleId: string;
  title: string | null;
  version: number | null;
  targetName: string;
  duration: string;
  interval: string;
  requestedBy: string;
}): RunMetadata {
  const version = s.version ? ` v${s.version}` : ' (inline)';
  return {
    staticSummary: oneLine(`Shadow-run ${named(s.ruleId, s.title)}${version} on ${s.targetName} for ${s.duration} every ${s.interval} ${askedBy(s.requestedBy)}`),
    staticDetails: details('Shadow evaluation on live data (nothing deployed)', [
      ['Rule', s.version ? ruleLink(s.ruleId, s.version) : `${s.ruleId} (inline rule)`],
      ['Title', s.title],
      ['Target', s.targetName],
      ['Duration', s.duration],
      ['Interval', s.interval],
      ['Requested by', s.requestedBy],
      ['Shadow', `[${s.shadowId}](${API}/shadows/${s.shadowId})`],
    ]),
  };
}

/** A notification; `data` is the event's payload, from which the rule and target are named when it has them. */
export function notifyRunMetadata(n: { event: string; sourceKey: string; data: Record<string, unknown> }): RunMetadata {
  const about = [n.data['rule_id'], n.data['version'] !== undefined ? `v${String(n.data['version'])}` : null, n.data['target'] ? `on ${String(n.data['target'])}` : null]
    .filter((v) => v !== null && v !== undefined)
    .map(String)
    .join(' ');
  return {
    staticSummary: oneLine(`Notify ${n.event}${about ? ` about ${about}` : ''}`),
    staticDetails: details('Webhook notification', [
      ['Event', n.event],
      ['Rule', typeof n.data['rule_id'] === 'string' ? ruleLink(n.data['rule_id']) : null],
      ['Target', typeof n.data['target'] === 'string' ? n.data['target'] : null],
      ['Deployment', typeof n.data['deployment_id'] === 'string' ? `[${n.data['deployment_id']}](${API}/deployments/${n.data['deployment_id']})` : null],
      ['Caused by', n.sourceKey],
      ['Deliveries', `[webhook deliveries](${API}/settings/webhook/deliveries)`],
    ]),
  };
}

export function detectionScheduleMetadata(d: { deploymentId: string; ruleId: string; version: number; targetName: string; interval: string }): RunMetadata {
  return {
    staticSummary: oneLine(`Detect with ${d.ruleId} v${d.version} on ${d.targetName} every ${d.interval}`),
    staticDetails: details('Scheduled detection of a live deployment', [
      ['Rule', ruleLink(d.ruleId, d.version)],
      ['Target', d.targetName],
      ['Interval', d.interval],
      ['Deployment', `[${d.deploymentId}](${API}/deployments/${d.deploymentId})`],
      ['Alerts', `[alerts](${API}/alerts)`],
    ]),
  };
}

export function detectionBatchScheduleMetadata(d: { tenantId: string; targetName: string; interval: string }): RunMetadata {
  return {
    staticSummary: oneLine(`Detect with every live rule of ${d.tenantId} on ${d.targetName} every ${d.interval}`),
    staticDetails: details('Scheduled detection of every live deployment of a tenant on a target (one pass, a run record per rule)', [
      ['Tenant', d.tenantId],
      ['Target', d.targetName],
      ['Interval', d.interval],
      ['Rule health', `[rule health](${API}/health/dashboard)`],
      ['Alerts', `[alerts](${API}/alerts)`],
    ]),
  };
}

export const retentionRunMetadata: RunMetadata = {
  staticSummary: 'Apply retention: delete events and records older than each tenant keeps (daily)',
  staticDetails: details('Daily retention pass', [['Schedule', 'every day, overlapping runs skipped']]),
};

export function driftScheduleMetadata(minutes: number): RunMetadata {
  return {
    staticSummary: `Drift check of every target with something deployed (every ${minutes} min)`,
    staticDetails: details('Scheduled drift check', [
      ['Interval', `${minutes} minutes`],
      ['Targets', 'every target with a live deployment'],
    ]),
  };
}

export function driftCheckRunMetadata(d: { targetName: string; requestedBy: string }): RunMetadata {
  return {
    staticSummary: oneLine(`Drift check of ${d.targetName} ${askedBy(d.requestedBy)}`),
    staticDetails: details('Drift check of one target', [
      ['Target', d.targetName],
      ['Requested by', d.requestedBy],
      ['Drift', `[open drift](${API}/settings/targets/${d.targetName}/drift)`],
    ]),
  };
}

export function restoreRunMetadata(r: { deploymentId: string; ruleId: string; version: number; targetName: string; requestedBy: string }): RunMetadata {
  return {
    staticSummary: oneLine(`Restore ${r.ruleId} v${r.version} on ${r.targetName} as deployed ${askedBy(r.requestedBy)}`),
    staticDetails: details('Restore a drifted deployment', [
      ['Rule', ruleLink(r.ruleId, r.version)],
      ['Target', r.targetName],
      ['Deployment', `[${r.deploymentId}](${API}/deployments/${r.deploymentId})`],
      ['Requested by', r.requestedBy],
    ]),
  };
}
