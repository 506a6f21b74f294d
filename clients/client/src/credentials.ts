import { ChatInsecureTransportError } from './chat-errors.ts';

/**
 * The bare token of a token option. Every token option takes the bare token and the SDK writes the
 * `Bearer ` scheme itself. A value in header form (`Bearer <token>`) is taken too: a token never
 * holds whitespace, so the scheme and the token cannot be mistaken for each other. Anything else
 * with whitespace in it (two tokens, a pasted header of another kind) is refused.
 */
export function bareToken(value: string, option: string): string {
  const trimmed = value.trim();
  const token = /^Bearer +(\S+)$/i.exec(trimmed)?.[1] ?? trimmed;
  if (token === '') throw new TypeError(`ChatClient: ${option} is empty`);
  if (/\s/.test(token)) throw new TypeError(`ChatClient: ${option} must be the bare token (the client adds "Bearer " itself); this value holds whitespace`);
  return token;
}

/** 127.0.0.0/8, ::1 and `localhost`: addresses that never leave the machine. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host === '::1') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * Refuses a base URL that would carry the bearer token in clear text to another machine: plain
 * `http://` to a host that is not loopback, unless `allowInsecureHttp`. A page loaded over plain
 * http talking to its own origin is allowed: whoever can read that traffic can already rewrite the
 * page, so refusing would protect nothing.
 */
export function assertSafeTransport(baseUrl: string, allowInsecureHttp: boolean): void {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new TypeError(`ChatClient: baseUrl ${JSON.stringify(baseUrl)} is not a URL`);
  }
  if (url.protocol !== 'http:' || allowInsecureHttp || isLoopbackHost(url.hostname)) return;
  const page = (globalThis as { location?: { origin?: string } }).location?.origin;
  if (page !== undefined && page === url.origin) return;
  throw new ChatInsecureTransportError(baseUrl);
}
