import type { SecretBox } from '../../config/secret-box';
import { isCredentialKey } from '../../siem/remote/credentials';

export { isCredentialKey };

/** What a credential is shown as; sent back unchanged, it keeps the stored credential. */
export const MASKED_CREDENTIAL = '********';

export type ConnectionSettings = Record<string, string | number | boolean>;

/** The connection with its credentials sealed by the secret box, for storing. */
export function sealConnection(secrets: SecretBox, connection: ConnectionSettings, previous: Record<string, unknown> = {}): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(connection).map(([k, v]) => {
      if (!isCredentialKey(k)) return [k, v];
      // "********" sent back unchanged keeps the stored credential.
      if (v === MASKED_CREDENTIAL && typeof previous[k] === 'string') return [k, previous[k]];
      return [k, secrets.seal(String(v))];
    }),
  );
}

/** The connection as it may be shown: credentials masked. */
export function maskConnection(connection: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(connection).map(([k, v]) => [k, isCredentialKey(k) ? MASKED_CREDENTIAL : v]));
}
