import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Server-side request forgery guard. A webhook URL is chosen by a tenant, so the
 * worker must never be steered at the service's own network: loopback, private,
 * link-local (and so cloud metadata 169.254.169.254), CGNAT, ULA (fd00:ec2::254),
 * multicast, unspecified, broadcast, documentation/benchmark/reserved ranges.
 *
 * Default-deny: only addresses ipaddr.js classifies as global `unicast` pass. IPv6
 * forms that embed an IPv4 address (::ffff:a.b.c.d, NAT64 64:ff9b::/96) are judged by
 * the embedded address; IPv4-compatible (::a.b.c.d), 6to4, Teredo and the other
 * transition ranges are refused outright. Numeric IPv4 spellings (2130706433,
 * 0x7f.1, 0177.0.0.1) are normalised by the WHATWG URL parser before they get here.
 */
const EXTRA_BLOCKED_V6: Array<[ipaddr.IPv6, number]> = [
  ipaddr.parseCIDR('::/96') as [ipaddr.IPv6, number], // IPv4-compatible (deprecated), ipaddr calls it unicast
  ipaddr.parseCIDR('64:ff9b:1::/48') as [ipaddr.IPv6, number], // local-use NAT64
  ipaddr.parseCIDR('2001:db8::/32') as [ipaddr.IPv6, number], // documentation
  ipaddr.parseCIDR('3fff::/20') as [ipaddr.IPv6, number], // documentation (RFC 9637)
  ipaddr.parseCIDR('5f00::/16') as [ipaddr.IPv6, number], // SRv6 SIDs
];

/** Why `address` may not be connected to, or null when it may. */
export function blockedReason(address: string): string | null {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return 'not an IP address';
  }
  if (ip.kind() === 'ipv6') {
    const v6 = ip as ipaddr.IPv6;
    const range = v6.range();
    if (range === 'ipv4Mapped') return blockedReason(v6.toIPv4Address().toString());
    if (range === 'rfc6052') {
      // NAT64: the last 32 bits are the IPv4 destination.
      const b = v6.toByteArray();
      return blockedReason(b.slice(12).join('.'));
    }
    if (range !== 'unicast') return `${range} address`;
    for (const [net, bits] of EXTRA_BLOCKED_V6) if (v6.match(net, bits)) return 'reserved address';
    return null;
  }
  const range = (ip as ipaddr.IPv4).range();
  return range === 'unicast' ? null : `${range} address`;
}

export class BlockedTargetError extends Error {
  readonly code = 'EBLOCKEDTARGET';
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net/tls.connect that resolves and then drops blocked addresses,
 * so the check applies to the address actually connected to (DNS rebinding between
 * a check and the connect cannot slip through). Fails when nothing is left.
 */
export function guardedLookup(
  hostname: string,
  options: { all?: boolean; family?: number | string } | number | LookupCallback,
  maybeCallback?: LookupCallback,
): void {
  const callback = (typeof options === 'function' ? options : maybeCallback) as LookupCallback;
  const opts = typeof options === 'object' ? options : {};
  const family = typeof opts.family === 'number' ? opts.family : 0;
  dnsLookup(hostname, { all: true, family }, (err, addresses) => {
    if (err) return callback(err, opts.all ? [] : '');
    const allowed = addresses.filter((a) => blockedReason(a.address) === null);
    if (allowed.length === 0) {
      const first = addresses[0]?.address ?? hostname;
      const reason = blockedReason(first) ?? 'blocked';
      return callback(
        new BlockedTargetError(`${hostname} resolves to a blocked address (${first}: ${reason})`),
        opts.all ? [] : '',
      );
    }
    if (opts.all) return callback(null, allowed);
    const one = allowed[0] as LookupAddress;
    callback(null, one.address, one.family);
  });
}

/** The host of a URL without IPv6 brackets. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

/** Checks a literal IP host before any connection (net.connect skips `lookup` for literals). */
export function literalBlockedReason(url: URL): string | null {
  const host = hostOf(url);
  if (isIP(host) === 0) return null;
  return blockedReason(host);
}

/**
 * Registration-time check: a literal blocked IP, `localhost`, or a name that resolves
 * (within `timeoutMs`) to any blocked address is refused. A name that does not
 * resolve now is accepted; every attempt checks again at connect time.
 */
export async function registrationBlockedReason(url: URL, timeoutMs = 3000): Promise<string | null> {
  const host = hostOf(url).toLowerCase();
  if (isIP(host) !== 0) return blockedReason(host);
  if (host === 'localhost' || host.endsWith('.localhost')) return 'loopback name';
  const addresses = await new Promise<LookupAddress[]>((resolve) => {
    const timer = setTimeout(() => resolve([]), timeoutMs);
    dnsLookup(host, { all: true }, (err, list) => {
      clearTimeout(timer);
      resolve(err ? [] : list);
    });
  });
  for (const a of addresses) {
    const reason = blockedReason(a.address);
    if (reason) return `${host} resolves to ${a.address} (${reason})`;
  }
  return null;
}
