export const PERMISSIONS = ['rules:read', 'rules:write', 'deploy', 'approve', 'admin', 'operator'] as const;
export type Permission = (typeof PERMISSIONS)[number];
