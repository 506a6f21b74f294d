import { createHmac } from 'node:crypto';

/** The headers of a webhook delivery; the SDK's `verifyWebhook` reads the same ones. */
export const DELIVERY_HEADERS = {
  delivery: 'x-chat-delivery',
  event: 'x-chat-event',
  timestamp: 'x-chat-timestamp',
  signature: 'x-chat-signature-256',
} as const;

/**
 * `sha256=` and the hex HMAC-SHA256, keyed with the webhook's secret, of `<timestamp>.<body>`: the
 * timestamp (Unix seconds) is signed with the body, so a captured delivery cannot be replayed later
 * with a fresh timestamp (GitHub's `X-Hub-Signature-256` signs the body alone).
 */
export function signDelivery(secret: string, timestampSeconds: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestampSeconds}.`).update(body).digest('hex')}`;
}

/** The delivery ID of a notification sent to a webhook: the same on every retry and redelivery. */
export function deliveryIdOf(webhookId: string, notificationId: string): string {
  return `${webhookId}.${notificationId}`;
}
