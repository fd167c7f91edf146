/** IP parsing for the `cidr` modifier; bigint keeps IPv4 and IPv6 on one code path. */

export interface ParsedIp {
  readonly version: 4 | 6;
  readonly value: bigint;
}

export function parseIpv4(text: string): bigint | undefined {
  const parts = text.split('.');
  if (parts.length !== 4) return undefined;
  let value = 0n;
  for (const p of parts) {
    // No leading zeros: "010" is octal 8 to inet_aton and decimal 10 to others; Python's ipaddress,
    // Elasticsearch's ip type and the Sigma reference refuse it, and so does this.
    if (!/^(0|[1-9]\d{0,2})$/.test(p)) return undefined;
    const n = Number(p);
    if (n > 255) return undefined;
    value = (value << 8n) | BigInt(n);
  }
  return value;
}

export function parseIpv6(text: string): bigint | undefined {
  let head = text;
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hextets.
  const v4 = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const tail = parseIpv4(v4[2]!);
    if (tail === undefined) return undefined;
    head = `${v4[1]}${((tail >> 16n) & 0xffffn).toString(16)}:${(tail & 0xffffn).toString(16)}`;
  }
  const halves = head.split('::');
  if (halves.length > 2) return undefined;
  const left = halves[0] ? halves[0].split(':') : [];
  const right = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - left.length - right.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...left, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...right];
  let value = 0n;
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    value = (value << 16n) | BigInt(parseInt(g, 16));
  }
  return value;
}

export function parseIp(text: string): ParsedIp | undefined {
  const trimmed = text.trim();
  if (trimmed.includes(':')) {
    const zoneless = trimmed.replace(/%.*$/, '');
    const v = parseIpv6(zoneless);
    return v === undefined ? undefined : { version: 6, value: v };
  }
  const v = parseIpv4(trimmed);
  return v === undefined ? undefined : { version: 4, value: v };
}

export interface ParsedNetwork {
  readonly version: 4 | 6;
  readonly prefix: number;
  readonly address: bigint;
}

export function parseNetwork(text: string): ParsedNetwork | undefined {
  const [addr, prefixText, extra] = text.trim().split('/');
  if (addr === undefined || extra !== undefined) return undefined;
  const ip = parseIp(addr);
  if (!ip) return undefined;
  const bits = ip.version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? bits : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits) return undefined;
  return { version: ip.version, prefix, address: ip.value & networkMask(ip.version, prefix) };
}

export function networkMask(version: 4 | 6, prefix: number): bigint {
  const bits = BigInt(version === 4 ? 32 : 128);
  const all = (1n << bits) - 1n;
  return (all << (bits - BigInt(prefix))) & all;
}

export function formatIpv4(value: bigint): string {
  return [24n, 16n, 8n, 0n].map((s) => ((value >> s) & 0xffn).toString()).join('.');
}

export function formatIpv6Groups(value: bigint): string[] {
  const groups: string[] = [];
  for (let s = 112n; s >= 0n; s -= 16n) groups.push(((value >> s) & 0xffffn).toString(16));
  return groups;
}
