import type { Request } from 'express';
import { invalidRequest } from '../../domain/errors';

const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

export function idempotencyKeyOf(req: Request): string | undefined {
  const key = req.get('idempotency-key');
  if (key === undefined) return undefined;
  if (!KEY_PATTERN.test(key)) {
    throw invalidRequest('The Idempotency-Key header must be 1 to 255 visible ASCII characters', [{ pointer: '/headers/idempotency-key', message: 'invalid' }]);
  }
  return key;
}
