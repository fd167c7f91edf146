import net from 'node:net';

/**
 * A loopback address, or `localhost` itself (which Node resolves without DNS). Other names that
 * usually mean this machine (`*.localhost`, `ip6-localhost`) are refused: where /etc/hosts lacks
 * them they go to DNS, and a credential would cross the network in clear.
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost') return true;
  if (net.isIPv4(host)) return host.startsWith('127.');
  if (net.isIPv6(host)) return host === '::1' || host === '0:0:0:0:0:0:0:1';
  return false;
}

/**
 * Why a SIEM address is refused, or null when it is acceptable: an absolute https URL, or http on a
 * loopback address only (credentials never cross a network in clear). No user info, query or fragment.
 */
export function endpointProblem(value: string): string | null {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.username || url.password) return 'must not carry credentials (give them in their own settings)';
  if (url.search || url.hash) return 'must not have a query string or fragment';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:') return isLoopbackHost(url.hostname) ? null : 'must use https (plain http is accepted for loopback addresses only)';
  return `has scheme ${url.protocol.replace(/:$/, '')}; use https`;
}

/** The base URL with one trailing slash removed, so paths join without doubling it. */
export function trimBase(value: string): string {
  return value.replace(/\/+$/, '');
}
