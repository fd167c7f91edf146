import type { Request } from 'express';
import { invalidRequest } from '../../domain/errors';
import { TOKEN_LENGTH, TOKEN_PREFIX } from '../../domain/tenants/token-format';

/**
 * Keeps tokens out of URLs, logs and audit rows. A token belongs in the Authorization header only:
 * anything in a URL ends up in request logs, proxy logs and browser history.
 */

/** Query parameters other APIs read tokens from; refused here so a token sent that way fails loudly. */
const TOKEN_PARAMETERS = new Set(['access_token', 'token', 'api_key', 'apikey']);

/** One character, literal or percent-encoded (`%64` for `d`), so encoding a token does not hide it. */
function literalOrEncoded(char: string): string {
  const hex = char.charCodeAt(0).toString(16);
  return `(?:${char}|%${hex[0]}[${hex[1]!.toLowerCase()}${hex[1]!.toUpperCase()}])`;
}
const ENCODED_BASE62 = '%(?:3[0-9]|[46][1-9a-fA-F]|[57][0-9aA])';
const TOKEN_SHAPE = new RegExp(`${[...TOKEN_PREFIX].map(literalOrEncoded).join('')}(?:[0-9A-Za-z]|${ENCODED_BASE62}){${TOKEN_LENGTH - TOKEN_PREFIX.length}}`, 'g');

export const REDACTED = '[redacted]';

/** Does the text hold something shaped like a detflow token (checksum or not, encoded or not)? */
export function holdsTokenShape(text: string): boolean {
  TOKEN_SHAPE.lastIndex = 0;
  return TOKEN_SHAPE.test(text);
}

/** Replaces everything shaped like a detflow token with `dfw_[redacted]`. */
export function redactTokens(text: string): string {
  return text.replace(TOKEN_SHAPE, TOKEN_PREFIX + REDACTED);
}

/** A URL as it may be logged: token-shaped text redacted everywhere, and the value of token parameters too. */
export function redactUrl(url: string): string {
  const at = url.indexOf('?');
  const path = redactTokens(at < 0 ? url : url.slice(0, at));
  if (at < 0) return path;
  const query = url
    .slice(at + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      const name = eq < 0 ? pair : pair.slice(0, eq);
      return eq >= 0 && TOKEN_PARAMETERS.has(decode(name).toLowerCase()) ? `${redactTokens(name)}=${REDACTED}` : redactTokens(pair);
    })
    .join('&');
  return `${path}?${query}`;
}

/**
 * 400 for a request carrying a token in its query string: a token parameter by name, or any name or
 * value shaped like a token. Runs before anything reads the query.
 */
export function refuseTokenInQuery(req: Request): void {
  const at = req.originalUrl.indexOf('?');
  if (at < 0) return;
  const raw = req.originalUrl.slice(at + 1);
  const named = raw
    .split('&')
    .map((pair) => decode(pair.split('=', 1)[0]!).toLowerCase())
    .find((name) => TOKEN_PARAMETERS.has(name));
  if (named === undefined && !holdsTokenShape(raw) && !holdsTokenShape(decode(raw))) return;
  throw invalidRequest(
    named !== undefined
      ? `The query parameter ${named} is not accepted: tokens in URLs end up in logs. Send the token as "Authorization: Bearer <token>", and revoke it if it was sent in a URL before`
      : 'The query string holds something shaped like an API token: tokens in URLs end up in logs. Send the token as "Authorization: Bearer <token>", and revoke it if it was a real one',
  );
}

function decode(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}
