export const PERMISSIONS = ['rules:read', 'rules:write', 'events:write', 'deploy', 'approve', 'admin', 'operator'] as const;
export type Permission = (typeof PERMISSIONS)[number];
