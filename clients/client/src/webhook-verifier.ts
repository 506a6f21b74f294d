import { ChatError } from './chat-errors.ts';
import type { NotificationResponse } from './contract-types.ts';

/** The headers of a webhook delivery (docs/interface.md, "Webhooks"). */
export const WEBHOOK_HEADERS = {
  delivery: 'x-chat-delivery',
  event: 'x-chat-event',
  timestamp: 'x-chat-timestamp',
  signature: 'x-chat-signature-256',
} as const;

/** The body of a webhook delivery: one notification of the bot's, as its inbox would list it. */
export interface WebhookDelivery {
  /** The same on every retry and redelivery of this notification to this webhook: deduplicate on it. */
  deliveryId: string;
  event: 'notification';
  webhookId: string;
  notification: NotificationResponse;
}

/** Why a delivery was refused; answer it with a 4xx and do not act on it. */
export type WebhookRefusal = 'malformed' | 'signature_missing' | 'signature_mismatch' | 'timestamp_outside_window' | 'replayed';

/** A request that is not a genuine, fresh, first delivery from the service. */
export class ChatWebhookVerificationError extends ChatError {
  override name = 'ChatWebhookVerificationError';

  constructor(
    readonly reason: WebhookRefusal,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Remembers the delivery IDs already acted on, so a delivery sent again (a retry after a lost answer,
 * a redelivery, or a replay by someone who captured it) is acted on once. `claim` returns false for
 * an ID it has seen. Keep it at least as long as the timestamp window: an older replay is refused by
 * its timestamp. Several receiver instances share one store (Redis `SET NX EX`, a table with a unique
 * key): implement this interface over it.
 */
export interface DeliveryIdStore {
  claim(deliveryId: string): boolean | Promise<boolean>;
  /** Forgets a claim, so a delivery whose handling failed is handled when it comes again. */
  release?(deliveryId: string): void | Promise<void>;
}

/** A {@link DeliveryIdStore} in this process's memory, bounded in time and size. */
export class MemoryDeliveryIdStore implements DeliveryIdStore {
  private readonly seen = new Map<string, number>();

  constructor(private readonly options: { ttlSeconds?: number; maxEntries?: number; now?: () => number } = {}) {}

  claim(deliveryId: string): boolean {
    const now = this.options.now?.() ?? Date.now();
    const ttlMs = (this.options.ttlSeconds ?? 600) * 1000;
    // Entries are in insertion order, so the expired ones are at the front.
    for (const [id, at] of this.seen) {
      if (now - at < ttlMs && this.seen.size < (this.options.maxEntries ?? 100_000)) break;
      this.seen.delete(id);
    }
    if (this.seen.has(deliveryId)) return false;
    this.seen.set(deliveryId, now);
    return true;
  }

  release(deliveryId: string): void {
    this.seen.delete(deliveryId);
  }
}

/** Options of {@link verifyWebhook}. */
export interface WebhookVerifyOptions {
  /** The webhook's signing secret; during a rotation, the new and the old one. */
  secret: string | readonly string[];
  /** Largest difference between the delivery's timestamp and now. @defaultValue 300 */
  toleranceSeconds?: number;
  /** Where delivery IDs already acted on are kept; without it, replays are not detected. */
  deliveries?: DeliveryIdStore;
  /** The clock, in milliseconds. @defaultValue Date.now */
  now?: () => number;
}

/** Headers as Node (`req.headers`), fetch (`Headers`) or a plain object give them. */
type HeaderSource = Headers | Record<string, string | string[] | undefined>;

function header(headers: HeaderSource, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | undefined>;
  const value = record[name] ?? Object.entries(record).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
}

const encoder = new TextEncoder();

function hexToBytes(hex: string): Uint8Array<ArrayBuffer> | undefined {
  if (!/^(?:[0-9a-f]{2})+$/i.test(hex)) return undefined;
  const bytes = new Uint8Array(new ArrayBuffer(hex.length / 2));
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

/**
 * Checks a webhook delivery before anything acts on it: the `X-Chat-Signature-256` header is
 * `sha256=` and the hex HMAC-SHA256, keyed with the webhook's secret, of `<X-Chat-Timestamp>.<raw
 * body>`; the timestamp is within `toleranceSeconds` of now; and, with `deliveries`, the delivery ID
 * has not been acted on before. Pass the body exactly as received (the raw bytes, not re-serialized
 * JSON). The signature comparison is WebCrypto's verify, which takes the same time for any mismatch.
 * Runs in Node >= 20 and browsers' workers alike.
 *
 * @returns the parsed delivery
 * @throws ChatWebhookVerificationError (answer 400 or 401 and drop the request; with `replayed`, 200)
 * @example
 * const delivery = await verifyWebhook({ headers: req.headers, body: rawBody }, { secret, deliveries });
 * await handle(delivery.notification);
 */
export async function verifyWebhook(
  request: { headers: HeaderSource; body: string | Uint8Array },
  options: WebhookVerifyOptions,
): Promise<WebhookDelivery> {
  const signatureHeader = header(request.headers, WEBHOOK_HEADERS.signature);
  const timestampHeader = header(request.headers, WEBHOOK_HEADERS.timestamp);
  if (!signatureHeader || !timestampHeader) throw new ChatWebhookVerificationError('signature_missing', 'the delivery carries no signature or no timestamp');
  const signature = /^sha256=([0-9a-f]{64})$/i.exec(signatureHeader.trim())?.[1];
  if (!signature || !/^[0-9]{1,12}$/.test(timestampHeader)) throw new ChatWebhookVerificationError('malformed', 'the signature or timestamp header is not in the expected form');

  const body = typeof request.body === 'string' ? encoder.encode(request.body) : request.body;
  const signed = new Uint8Array(new ArrayBuffer(timestampHeader.length + 1 + body.length));
  signed.set(encoder.encode(`${timestampHeader}.`), 0);
  signed.set(body, timestampHeader.length + 1);
  const expected = hexToBytes(signature)!;
  const secrets = typeof options.secret === 'string' ? [options.secret] : options.secret;
  if (secrets.length === 0 || secrets.some((s) => s === '')) throw new TypeError('verifyWebhook: secret must not be empty');
  let genuine = false;
  for (const secret of secrets) {
    const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
    if (await crypto.subtle.verify('HMAC', key, expected, signed)) genuine = true;
  }
  if (!genuine) throw new ChatWebhookVerificationError('signature_mismatch', 'the signature does not match the body and the secret');

  // Checked after the signature, so only the service's own (signed) timestamp is judged.
  const nowSeconds = Math.floor((options.now?.() ?? Date.now()) / 1000);
  if (Math.abs(nowSeconds - Number(timestampHeader)) > (options.toleranceSeconds ?? 300)) {
    throw new ChatWebhookVerificationError('timestamp_outside_window', 'the delivery is older (or newer) than the accepted window');
  }

  let delivery: WebhookDelivery;
  try {
    delivery = JSON.parse(new TextDecoder().decode(body)) as WebhookDelivery;
  } catch {
    throw new ChatWebhookVerificationError('malformed', 'the body is not JSON');
  }
  if (typeof delivery?.deliveryId !== 'string' || delivery.deliveryId !== header(request.headers, WEBHOOK_HEADERS.delivery)) {
    throw new ChatWebhookVerificationError('malformed', 'the body and the X-Chat-Delivery header name different deliveries');
  }
  if (options.deliveries && !(await options.deliveries.claim(delivery.deliveryId))) {
    throw new ChatWebhookVerificationError('replayed', `delivery ${delivery.deliveryId} was acted on already`);
  }
  return delivery;
}
