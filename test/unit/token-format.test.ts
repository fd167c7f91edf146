import { displayPrefix, generateToken, hashToken, isWellFormedToken, TOKEN_LENGTH } from '../../domain/tenants/token-format';
import { effectivePermissions } from '../../domain/tenants/actor';

describe('API token format', () => {
  it('generates dfw_ + 32 base62 + 6 checksum characters that validate', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const token = generateToken();
      expect(token).toMatch(/^dfw_[0-9A-Za-z]{38}$/);
      expect(token).toHaveLength(TOKEN_LENGTH);
      expect(isWellFormedToken(token)).toBe(true);
      seen.add(token);
    }
    expect(seen.size).toBe(200);
  });

  it('rejects a token with one character changed (checksum)', () => {
    const token = generateToken();
    for (const i of [4, 20, 35, 41]) {
      const c = token[i] === 'a' ? 'b' : 'a';
      expect(isWellFormedToken(token.slice(0, i) + c + token.slice(i + 1))).toBe(false);
    }
  });

  it('rejects other shapes', () => {
    for (const bad of ['', 'dfw_', 'ghp_' + 'a'.repeat(38), generateToken() + 'x', generateToken().replace('dfw_', 'DFW_'), 'dfw_' + '!'.repeat(38)]) {
      expect(isWellFormedToken(bad)).toBe(false);
    }
  });

  it('hashes with SHA-256 and shows only a short prefix', () => {
    const token = generateToken();
    expect(hashToken(token)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashToken(token)).not.toBe(hashToken(generateToken()));
    expect(displayPrefix(token)).toBe(token.slice(0, 10));
  });

  it('lets admin imply the tenant permissions but never operator', () => {
    expect([...effectivePermissions(['admin'])].sort()).toEqual(['admin', 'approve', 'deploy', 'events:write', 'rules:read', 'rules:write']);
    expect(effectivePermissions(['deploy', 'bogus']).has('rules:read')).toBe(false);
  });
});
