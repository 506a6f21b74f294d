import type { IncomingMessage } from 'node:http';
import { CoreRefusalError } from './http-errors.ts';

/** Host names a request on the developer's own machine carries, whatever the port. */
const LOOPBACK_HOSTNAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** The host name of a `Host` header value, lower-cased, or undefined when it is not a bare `host[:port]`. */
function hostnameOf(host: string | undefined): string | undefined {
  if (host === undefined || host === '' || /[\s/?#@\\]/.test(host)) return undefined;
  try {
    return new URL(`http://${host}`).hostname.toLowerCase();
  } catch {
    return undefined;
  }
}

function publicHostname(url: string): string | undefined {
  return URL.canParse(url) ? new URL(url).hostname.toLowerCase() : undefined;
}

/**
 * Guards the development surface (`/dev/*`: minting tokens, replacing the fixture, signing in)
 * against DNS rebinding. A web page on an attacker's name that resolves to 127.0.0.1 reaches
 * dev-core with its own name in `Host`, and `/dev/*` has no authentication, so only requests
 * naming a loopback host (`127.0.0.1`, `localhost`, `[::1]`, any port) or the host of dev-core's
 * public URL are served; any other is refused with 403 `host_not_allowed`. The route table runs it
 * before each `/dev/*` handler, so a refused request's body is never read.
 */
export function devHostGuard(publicUrl: () => string): (req: IncomingMessage) => void {
  return (req) => {
    const hostname = hostnameOf(req.headers.host);
    // The public URL is known only once the listener has its port, so it is read per request.
    if (hostname !== undefined && (LOOPBACK_HOSTNAMES.has(hostname) || hostname === publicHostname(publicUrl()))) return;
    throw new CoreRefusalError(403, 'host_not_allowed', "the development endpoints answer only requests addressed to a loopback host or to dev-core's public URL");
  };
}
