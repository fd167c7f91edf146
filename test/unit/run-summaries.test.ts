import { deployRunMetadata, notifyRunMetadata, rollbackRunMetadata, sigmaTitle } from '../../workflows/run-summaries';

describe('run summaries and details for the Temporal UI', () => {
  const deploy = (description: string) =>
    deployRunMetadata({
      ruleId: 'r1',
      title: 'Encoded | PowerShell',
      version: 3,
      targets: ['splunk-prod', 'local'],
      requestedBy: 'ci',
      approvalId: null,
      description,
      deploymentIds: ['d1'],
    });

  it('keeps the summary on one line and bounded, whatever the reason holds', () => {
    const { staticSummary } = deploy(`line one\nline two ${'x'.repeat(500)}`);
    expect(staticSummary).not.toContain('\n');
    expect(staticSummary.length).toBe(200);
    expect(staticSummary.startsWith('Deploy ‘Encoded | PowerShell’ v3 → splunk-prod, local (asked by ci: line one line two x')).toBe(true);
    expect(staticSummary.endsWith('…')).toBe(true);
  });

  it('escapes what would break a markdown table row and leaves out what is absent', () => {
    const { staticDetails } = deploy('a | b');
    expect(staticDetails).toContain('| Title | Encoded \\| PowerShell |');
    expect(staticDetails).toContain('| Description | a \\| b |');
    expect(staticDetails).not.toContain('| Link |');
    expect(staticDetails).toContain('| Approval | not required |');
  });

  it('names a removal and a rule without a title by its id', () => {
    const { staticSummary } = rollbackRunMetadata({
      ruleId: 'r9',
      targetName: 't',
      fromVersion: 2,
      toVersion: null,
      requestedBy: 'noise budget',
      reason: 'over budget',
      fromDeploymentId: 'd',
    });
    expect(staticSummary).toBe('Roll back ‘r9’ v2 → removed on t (asked by noise budget: over budget)');
  });

  it('names what a notification is about from its payload', () => {
    expect(notifyRunMetadata({ event: 'approval.requested', sourceKey: 'k', data: { rule_id: 'r1', version: 2 } }).staticSummary).toBe(
      'Notify approval.requested about r1 v2',
    );
    expect(notifyRunMetadata({ event: 'webhook.test', sourceKey: 'k', data: {} }).staticSummary).toBe('Notify webhook.test');
  });

  it("reads an inline Sigma rule's title", () => {
    expect(sigmaTitle("id: x\ntitle: 'Quoted title'\nlevel: low")).toBe('Quoted title');
    expect(sigmaTitle('id: x\nlevel: low')).toBeNull();
  });
});
