import { actionToken, approvalAttachment, isActionToken } from '../../domain/integrations/mattermost/buttons';

const KEY = 'a-key-of-the-tenant';
const APPROVAL = '0f000000-0000-4000-8000-000000000001';

describe("Mattermost buttons' tokens", () => {
  it('binds the token to the key, tenant, approval and decision', () => {
    const token = actionToken(KEY, 'acme', APPROVAL, 'approve');
    expect(isActionToken(KEY, 'acme', APPROVAL, 'approve', token)).toBe(true);
    expect(isActionToken('another-key', 'acme', APPROVAL, 'approve', token)).toBe(false);
    expect(isActionToken(KEY, 'globex', APPROVAL, 'approve', token)).toBe(false);
    expect(isActionToken(KEY, 'acme', '0f000000-0000-4000-8000-000000000002', 'approve', token)).toBe(false);
    expect(isActionToken(KEY, 'acme', APPROVAL, 'reject', token)).toBe(false);
    expect(isActionToken(KEY, 'acme', APPROVAL, 'approve', token.slice(0, -1))).toBe(false);
    expect(isActionToken(KEY, 'acme', APPROVAL, 'approve', '')).toBe(false);
  });

  it('gives each button its own decision and token, with ids Mattermost can route', () => {
    const attachment = approvalAttachment({ text: 'Approval requested', tenantId: 'acme', approvalId: APPROVAL, actionKey: KEY, actionsUrl: 'https://detflow.example/x' });
    const actions = attachment.actions!;
    expect(actions.map((a) => a.integration.context.decision)).toEqual(['approve', 'reject', 'request_changes']);
    for (const a of actions) {
      expect(a.id).toMatch(/^[A-Za-z0-9]+$/);
      expect(isActionToken(KEY, 'acme', APPROVAL, a.integration.context.decision, a.integration.context.token)).toBe(true);
    }
    expect(new Set(actions.map((a) => a.integration.context.token)).size).toBe(3);
  });
});
