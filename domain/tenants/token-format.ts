import crypto from 'node:crypto';

/**
 * API tokens look like `dfw_` + 32 random base62 characters + a 6-character base62 CRC32 checksum.
 * The fixed prefix lets secret scanners find leaked tokens, and the checksum lets us reject typos and
 * random strings without touching the database.
 */
export const TOKEN_PREFIX = 'dfw_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
export const TOKEN_LENGTH = TOKEN_PREFIX.length + RANDOM_LENGTH + CHECKSUM_LENGTH;
const TOKEN_PATTERN = new RegExp(`^${TOKEN_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

function toBase62(value: number, width: number): string {
  let out = '';
  let n = value;
  for (let i = 0; i < width; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

function checksum(randomPart: string): string {
  return toBase62(crc32(randomPart), CHECKSUM_LENGTH);
}

export function generateToken(): string {
  // Rejection sampling keeps every base62 character equally likely.
  let random = '';
  while (random.length < RANDOM_LENGTH) {
    for (const byte of crypto.randomBytes(RANDOM_LENGTH)) {
      if (byte < 248 && random.length < RANDOM_LENGTH) random += BASE62[byte % 62];
    }
  }
  return TOKEN_PREFIX + random + checksum(random);
}

export function isWellFormedToken(token: string): boolean {
  if (!TOKEN_PATTERN.test(token)) return false;
  const random = token.slice(TOKEN_PREFIX.length, TOKEN_PREFIX.length + RANDOM_LENGTH);
  return token.slice(TOKEN_PREFIX.length + RANDOM_LENGTH) === checksum(random);
}

export function hashToken(token: string): string {
  return crypto.createHash('sha256').update(token).digest('hex');
}

/** What may be shown of a token in lists and audit rows: enough to recognise it, useless to use it. */
export function displayPrefix(token: string): string {
  return token.slice(0, TOKEN_PREFIX.length + 6);
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[i] = c >>> 0;
  }
  return table;
})();

function crc32(text: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < text.length; i++) crc = CRC_TABLE[(crc ^ text.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
