import type { IncomingMessage, ServerResponse } from 'node:http';
import { replyIdempotencyKey } from '@chat/bot';
import { ChatWebhookVerificationError, verifyWebhook, type AppendResult, type ChatClient, type DeliveryIdStore, type WebhookDelivery } from '@chat/client';

/** Largest delivery body read; a notification is a few hundred bytes. */
const MAX_BODY_BYTES = 256 * 1024;

/** The reply to a mention. It depends on the delivery alone, so a second try sends the very same request. */
export function replyText(delivery: WebhookDelivery): string {
  return `got your mention by webhook, ${delivery.notification.senderId}`;
}

/**
 * Replies in the room of the delivery's notification. The Idempotency-Key comes from the delivery
 * ID, which is the same on every retry and redelivery, so a delivery handled once already (the bot
 * crashed before answering, and the service sent it again) finds its reply stored: the API answers
 * 200 with it, and nothing is posted twice.
 */
export async function replyTo(client: ChatClient, delivery: WebhookDelivery): Promise<AppendResult> {
  const { repositoryId, branchId } = delivery.notification;
  const idempotencyKey = await replyIdempotencyKey(delivery.deliveryId, 0);
  return client.appendMessage({ repositoryId, branchId }, { bodyMarkdown: replyText(delivery) }, { idempotencyKey });
}

export interface DeliveryHandlerDeps {
  client: ChatClient;
  secret: string;
  /** The delivery IDs acted on, so a delivery that comes again is answered at once. */
  deliveries: DeliveryIdStore;
  say(text: string): void;
}

/**
 * The request handler of the bot's receiver: every POST is verified on its raw bytes (signature,
 * timestamp, delivery ID not seen before) before anything reads it. A delivery seen before is
 * answered 200 at once; a forged or stale one 401 (400 when malformed). A genuine one is answered 200
 * once its reply is stored; when the reply fails, 500, and its delivery ID is forgotten so the
 * service's next try is handled.
 */
export function deliveryHandler(deps: DeliveryHandlerDeps): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const body = await readBody(req);
    if (body === undefined) {
      res.writeHead(413).end();
      return;
    }
    let delivery: WebhookDelivery;
    try {
      delivery = await verifyWebhook({ headers: req.headers, body }, { secret: deps.secret, deliveries: deps.deliveries });
    } catch (err) {
      if (!(err instanceof ChatWebhookVerificationError)) throw err;
      if (err.reason === 'replayed') {
        deps.say(`${err.message}: answered 200`);
        res.writeHead(200).end();
        return;
      }
      deps.say(`refused a request (${err.reason}): ${err.message}`);
      res.writeHead(err.reason === 'malformed' ? 400 : 401).end();
      return;
    }
    try {
      const { created, message } = await replyTo(deps.client, delivery);
      deps.say(`${created ? 'replied to' : 'had replied to'} ${delivery.deliveryId} in repository ${delivery.notification.repositoryId}: message ${message.messageId}`);
      res.writeHead(200).end();
    } catch (err) {
      await deps.deliveries.release?.(delivery.deliveryId);
      deps.say(`could not reply to ${delivery.deliveryId} (${(err as Error).message}): answered 500, the service will send it again`);
      res.writeHead(500).end();
    }
  };
}

/** The request's body as bytes, or undefined when it is larger than MAX_BODY_BYTES. */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
