import crypto from 'node:crypto';

/**
 * Whether an Authorization header carries `Bearer <expected>`; compared in constant time. With no
 * expected token, every request may read.
 */
export function bearerMatches(header: string | undefined, expected: string | undefined): boolean {
  if (expected === undefined) return true;
  const match = /^Bearer +(\S+)\s*$/i.exec(header ?? '');
  if (!match) return false;
  const given = crypto.createHash('sha256').update(match[1]!).digest();
  const wanted = crypto.createHash('sha256').update(expected).digest();
  return crypto.timingSafeEqual(given, wanted);
}
