/**
 * The webhook receiver of the fleet test (`bot-fleet-webhooks.test.ts`), in plain JavaScript on the
 * built `@chat/client` and `@chat/bot`, as a bot's author would write one. It verifies each delivery
 * (signature, timestamp window, delivery IDs already handled in this process) and replies
 * `re <messageId>` in the mention's room with an idempotency key derived from the delivery ID, so a
 * delivery sent again after this process was killed is answered by the API with the reply it holds:
 * every mention is handled exactly once, however often it is delivered. It answers 500 to every
 * delivery of `FAIL_REPOSITORY`. One stdout line per handled delivery: `handled <deliveryId>
 * <repositoryId> <ms from the notification's commit to the handler> <epoch ms> created|replayed`.
 *
 * Environment: CHAT_URL, CHAT_TOKEN, WEBHOOK_SECRET, PORT, FAIL_REPOSITORY (optional).
 */
import { createServer } from 'node:http';
import { replyIdempotencyKey } from '@chat/bot';
import { ChatClient, MemoryDeliveryIdStore, verifyWebhook } from '@chat/client';

const client = new ChatClient({ baseUrl: process.env.CHAT_URL, token: process.env.CHAT_TOKEN });
const deliveries = new MemoryDeliveryIdStore();
const failing = process.env.FAIL_REPOSITORY ?? '';

const server = createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  let delivery;
  try {
    delivery = await verifyWebhook({ headers: req.headers, body: Buffer.concat(chunks) }, { secret: process.env.WEBHOOK_SECRET, deliveries });
  } catch (err) {
    // A delivery handled already in this process is acknowledged again; anything else is refused.
    res.writeHead(err.reason === 'replayed' ? 200 : 401).end();
    return;
  }
  const { notification } = delivery;
  try {
    if (notification.repositoryId === failing) throw new Error('this repository fails');
    const entered = Date.now();
    const room = notification.branchId ? { repositoryId: notification.repositoryId, branchId: notification.branchId } : { repositoryId: notification.repositoryId };
    const result = await client.appendMessage(room, { bodyMarkdown: `re ${notification.messageId}` }, { idempotencyKey: await replyIdempotencyKey(delivery.deliveryId, 0) });
    process.stdout.write(`handled ${delivery.deliveryId} ${notification.repositoryId} ${entered - Date.parse(notification.createdAt)} ${entered} ${result.created ? 'created' : 'replayed'}\n`);
    res.writeHead(200).end();
  } catch {
    // Not handled: the service delivers it again later.
    await deliveries.release(delivery.deliveryId);
    res.writeHead(500).end();
  }
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('receiver listening\n'));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
