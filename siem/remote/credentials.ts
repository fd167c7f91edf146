/** Keys of a target's `connection` that hold credentials: sealed at rest, never returned, never logged. */
const CREDENTIAL_KEYS = /^(token|password|api_key|apikey|client_secret|secret|hec_token|shared_key)$/i;

export function isCredentialKey(key: string): boolean {
  return CREDENTIAL_KEYS.test(key);
}

/** The credential values of a connection, for redaction. */
export function credentialValues(connection: Readonly<Record<string, unknown>>): string[] {
  return Object.entries(connection)
    .filter(([k, v]) => isCredentialKey(k) && typeof v === 'string')
    .map(([, v]) => v as string);
}
