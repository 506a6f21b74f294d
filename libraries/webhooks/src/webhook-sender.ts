import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { Agent, request } from 'undici';
import { DELIVERY_HEADERS, signDelivery } from './delivery-signature.ts';
import { OutboundAddressRefusedError, type OutboundAddressGuard } from './outbound-address-policy.ts';

/** One POST of one delivery. */
export interface WebhookPost {
  url: string;
  secret: string;
  deliveryId: string;
  /** The JSON body, signed and sent as is. */
  body: string;
}

/** A 2xx answer is delivered; anything else, or no answer in time, is a failure to retry. */
export type WebhookPostResult = { delivered: true; status: number } | { delivered: false; status?: number; error: string };

export interface WebhookSenderOptions {
  /** Longest wait for the answer's headers, and for its body after them. */
  timeoutMs: number;
  /** Connections kept per receiver origin. @defaultValue 8 */
  connectionsPerOrigin?: number;
  /** @defaultValue Date.now */
  now?: () => number;
}

/** Bytes of an answer's body read (and thrown away) at most; the rest is cut off. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * Sends webhook deliveries: each POST signed at the moment it leaves (the timestamp is the send
 * time, so a retry carries a fresh one), to an address the guard allows. Host names are resolved by
 * the connection itself and every address is checked there, so the address checked is the one
 * connected to. Redirects are not followed: a 3xx is a failure like any other non-2xx.
 */
export class WebhookSender {
  private readonly agent: Agent;
  private readonly now: () => number;

  constructor(
    private readonly guard: OutboundAddressGuard,
    private readonly options: WebhookSenderOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.agent = new Agent({
      connections: options.connectionsPerOrigin ?? 8,
      connect: { lookup: guardedLookup(guard), timeout: options.timeoutMs },
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
  }

  /** The longest one send takes: a POST still unanswered then is aborted. */
  get longestSendMs(): number {
    return this.options.timeoutMs * 2;
  }

  async send(post: WebhookPost): Promise<WebhookPostResult> {
    try {
      // An IP literal is connected to without a lookup: it is checked here, with the scheme.
      this.guard.checkUrl(post.url);
      const timestamp = Math.floor(this.now() / 1000);
      const answer = await request(post.url, {
        method: 'POST',
        dispatcher: this.agent,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'chat-webhooks',
          [DELIVERY_HEADERS.delivery]: post.deliveryId,
          [DELIVERY_HEADERS.event]: 'notification',
          [DELIVERY_HEADERS.timestamp]: String(timestamp),
          [DELIVERY_HEADERS.signature]: signDelivery(post.secret, timestamp, post.body),
        },
        body: post.body,
        signal: AbortSignal.timeout(this.longestSendMs),
      });
      await drain(answer.body);
      if (answer.statusCode >= 200 && answer.statusCode < 300) return { delivered: true, status: answer.statusCode };
      return { delivered: false, status: answer.statusCode, error: `the receiver answered ${answer.statusCode}` };
    } catch (err) {
      return { delivered: false, error: describe(err) };
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}

async function drain(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<void> {
  let read = 0;
  for await (const chunk of body) {
    read += chunk.length;
    if (read > MAX_ANSWER_BYTES) {
      body.destroy();
      return;
    }
  }
}

function describe(err: unknown): string {
  if (err instanceof OutboundAddressRefusedError) return `refused: ${err.message}`;
  const cause = err instanceof Error && err.cause instanceof OutboundAddressRefusedError ? err.cause : undefined;
  if (cause) return `refused: ${cause.message}`;
  if (err instanceof Error) return `${(err as { code?: string }).code ?? err.name}: ${err.message}`;
  return String(err);
}

/** dns.lookup, then every address it gives checked by the guard; a refused one fails the connection. */
function guardedLookup(guard: OutboundAddressGuard): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
      if (err) return callback(err, '', 0);
      try {
        for (const a of addresses) guard.checkAddress(a.address);
      } catch (refusal) {
        return callback(refusal as NodeJS.ErrnoException, '', 0);
      }
      if (options.all) return (callback as unknown as (e: null, all: LookupAddress[]) => void)(null, addresses);
      const first = addresses[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      callback(null, first.address, first.family);
    });
  };
}
