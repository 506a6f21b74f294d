import { ConfigError } from './parse-env.ts';
import { DEVELOPMENT_SERVICE_TOKEN } from './fields.ts';

/** What the start-up check looks at. */
interface SafetyInput {
  developmentMode: boolean;
  /** Core's URL, when the process calls core. */
  coreUrl?: string | undefined;
  /** The service token the process presents to core, or (dev-core) expects from chat. */
  serviceToken?: string | undefined;
  /** Name of the service-token variable, for the message. @defaultValue 'CORE_SERVICE_TOKEN' */
  serviceTokenVariable?: string;
}

/** Hosts a plain-http core may use outside development mode: nothing leaves the machine. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/**
 * Outside development mode a process refuses the public development service token (anyone can read
 * it in this repository) and a plain-http core on another machine (the service token and users'
 * core credentials would cross the network in clear). Throws a ConfigError naming the setting.
 */
export function assertSafeOutsideDevelopment(input: SafetyInput): void {
  if (input.developmentMode) return;
  const problems: string[] = [];
  if (input.serviceToken === DEVELOPMENT_SERVICE_TOKEN) {
    problems.push(`${input.serviceTokenVariable ?? 'CORE_SERVICE_TOKEN'}: the public development token is refused outside development mode; set a real credential`);
  }
  if (input.coreUrl !== undefined) {
    const url = new URL(input.coreUrl);
    if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) {
      problems.push(`CORE_URL: plain http to a non-loopback host (${url.hostname}) is refused outside development mode; use https`);
    }
  }
  if (problems.length > 0) {
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')} (or set CHAT_DEVELOPMENT_MODE=true on a development machine)`);
  }
}
