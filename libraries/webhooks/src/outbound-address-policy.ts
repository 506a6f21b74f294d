import { BlockList, isIP } from 'node:net';

/**
 * Where the service may send a webhook. A webhook URL is chosen by whoever registers it, so without
 * this a registration could make the service POST to its own network: the metadata endpoint at
 * 169.254.169.254, a database on 10.0.0.5, an admin port on 127.0.0.1 (server-side request forgery).
 * Every address a host name resolves to is checked when the connection is made, not only when the
 * URL is registered, so a name that later resolves elsewhere (DNS rebinding) is refused too.
 */
export interface OutboundAddressPolicy {
  /**
   * Loopback (127.0.0.0/8, ::1) allowed, and plain `http://` to it: a bot on the developer's own
   * machine. Off in production.
   */
  allowLoopback: boolean;
  /** Private ranges allowed explicitly, in CIDR form (`10.20.0.0/16`, `fd00::/8`): an in-cluster receiver. */
  allowedCidrs: readonly string[];
}

/** Why an address or URL is refused. */
export class OutboundAddressRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundAddressRefusedError';
  }
}

/** Ranges that are not the public internet (IANA special-purpose registries). */
const NON_PUBLIC_V4: Array<[string, number]> = [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
];
const NON_PUBLIC_V6: Array<[string, number]> = [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96], // NAT64 reaches IPv4 ranges above
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
];
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** The policy compiled: answers whether one resolved address may be connected to. */
export class OutboundAddressGuard {
  private readonly nonPublic = new BlockList();
  private readonly allowed = new BlockList();

  constructor(readonly policy: OutboundAddressPolicy) {
    for (const [address, prefix] of NON_PUBLIC_V4) this.nonPublic.addSubnet(address, prefix, 'ipv4');
    for (const [address, prefix] of NON_PUBLIC_V6) this.nonPublic.addSubnet(address, prefix, 'ipv6');
    for (const cidr of policy.allowedCidrs) {
      const [address, prefix] = parseCidr(cidr);
      this.allowed.addSubnet(address, prefix, isIP(address) === 6 ? 'ipv6' : 'ipv4');
    }
  }

  /** @throws OutboundAddressRefusedError when `address` (an IP literal) is not public and not allowed. */
  checkAddress(address: string): void {
    const family = isIP(address);
    if (family === 0) throw new OutboundAddressRefusedError(`${address} is not an IP address`);
    const type = family === 6 ? 'ipv6' : 'ipv4';
    const v4Mapped = type === 'ipv6' ? /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1] : undefined;
    if (v4Mapped) return this.checkAddress(v4Mapped);
    if (this.allowed.check(address, type)) return;
    if (this.policy.allowLoopback && LOOPBACK.check(address, type)) return;
    if (this.nonPublic.check(address, type)) throw new OutboundAddressRefusedError(`${address} is a private, loopback or link-local address`);
  }

  /**
   * Checks a webhook URL as registered: `https:`, or `http:` to a loopback host when loopback is
   * allowed; no credentials in it; a host that is an IP literal must pass `checkAddress`. A host name
   * is checked again at every connection, by what it resolves to then.
   * @throws OutboundAddressRefusedError
   */
  checkUrl(raw: string): URL {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      throw new OutboundAddressRefusedError('the URL is not an absolute URL');
    }
    if (url.username || url.password) throw new OutboundAddressRefusedError('the URL must not carry credentials');
    if (url.hash) throw new OutboundAddressRefusedError('the URL must not carry a fragment');
    const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const literal = isIP(host) !== 0;
    const loopbackHost = literal ? LOOPBACK.check(host, isIP(host) === 6 ? 'ipv6' : 'ipv4') : host === 'localhost';
    if (url.protocol === 'http:') {
      if (!(this.policy.allowLoopback && loopbackHost)) throw new OutboundAddressRefusedError('the URL must be https (plain http only to loopback, in development)');
    } else if (url.protocol !== 'https:') {
      throw new OutboundAddressRefusedError('the URL must be https');
    }
    if (literal) this.checkAddress(host);
    else if (host === 'localhost' && !this.policy.allowLoopback) throw new OutboundAddressRefusedError('localhost is a loopback address');
    return url;
  }
}

function parseCidr(cidr: string): [string, number] {
  const match = /^([^/]+)\/(\d{1,3})$/.exec(cidr.trim());
  const family = match ? isIP(match[1]!) : 0;
  const prefix = match ? Number(match[2]) : -1;
  if (!match || family === 0 || prefix > (family === 6 ? 128 : 32)) throw new TypeError(`${cidr} is not a CIDR range (address/prefix)`);
  return [match[1]!, prefix];
}
