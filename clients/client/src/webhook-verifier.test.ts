import { createHmac } from 'node:crypto';
import { expect } from 'chai';
import { ChatWebhookVerificationError, MemoryDeliveryIdStore, verifyWebhook, type WebhookRefusal } from './webhook-verifier.ts';

const SECRET = 'whsec_test_0123456789';
const NOW = Date.parse('2026-11-27T12:00:00Z');

/** A delivery as the service sends it, signed with node:crypto (an implementation apart from the verifier's WebCrypto). */
function delivery(overrides: { secret?: string; timestamp?: number; deliveryId?: string; headerDeliveryId?: string } = {}) {
  const deliveryId = overrides.deliveryId ?? '01JGFJJZ00QNYBVPQTAT49MN0F';
  const body = JSON.stringify({ deliveryId, event: 'notification', webhookId: 'wh_1', notification: { notificationId: deliveryId, repositoryId: 'r' } });
  const timestamp = String(overrides.timestamp ?? NOW / 1000);
  const signature = createHmac('sha256', overrides.secret ?? SECRET).update(`${timestamp}.${body}`).digest('hex');
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-chat-delivery': overrides.headerDeliveryId ?? deliveryId,
      'x-chat-event': 'notification',
      'x-chat-timestamp': timestamp,
      'x-chat-signature-256': `sha256=${signature}`,
    } as Record<string, string>,
  };
}

async function refusal(promise: Promise<unknown>): Promise<WebhookRefusal> {
  try {
    await promise;
  } catch (err) {
    expect(err).to.be.instanceOf(ChatWebhookVerificationError);
    return (err as ChatWebhookVerificationError).reason;
  }
  throw new Error('expected a refusal');
}

describe('verifyWebhook', () => {
  const now = () => NOW;

  it('accepts a genuine delivery, from a string, from bytes and with fetch Headers', async () => {
    const d = delivery();
    expect((await verifyWebhook(d, { secret: SECRET, now })).deliveryId).to.equal('01JGFJJZ00QNYBVPQTAT49MN0F');
    expect((await verifyWebhook({ headers: d.headers, body: new TextEncoder().encode(d.body) }, { secret: SECRET, now })).event).to.equal('notification');
    expect((await verifyWebhook({ headers: new Headers(d.headers), body: d.body }, { secret: SECRET, now })).webhookId).to.equal('wh_1');
  });

  it('refuses a changed body, another secret, and a changed timestamp', async () => {
    const d = delivery();
    expect(await refusal(verifyWebhook({ ...d, body: d.body.replace('"r"', '"s"') }, { secret: SECRET, now }))).to.equal('signature_mismatch');
    expect(await refusal(verifyWebhook(d, { secret: 'another secret', now }))).to.equal('signature_mismatch');
    const moved = { ...d, headers: { ...d.headers, 'x-chat-timestamp': String(NOW / 1000 + 1) } };
    expect(await refusal(verifyWebhook(moved, { secret: SECRET, now }))).to.equal('signature_mismatch');
  });

  it('accepts either secret during a rotation', async () => {
    expect((await verifyWebhook(delivery({ secret: 'old' }), { secret: ['new', 'old'], now })).deliveryId).to.be.a('string');
    expect(await refusal(verifyWebhook(delivery({ secret: 'older' }), { secret: ['new', 'old'], now }))).to.equal('signature_mismatch');
  });

  it('refuses a delivery outside the timestamp window, either way', async () => {
    expect(await refusal(verifyWebhook(delivery({ timestamp: NOW / 1000 - 301 }), { secret: SECRET, now }))).to.equal('timestamp_outside_window');
    expect(await refusal(verifyWebhook(delivery({ timestamp: NOW / 1000 + 301 }), { secret: SECRET, now }))).to.equal('timestamp_outside_window');
    expect((await verifyWebhook(delivery({ timestamp: NOW / 1000 - 60 }), { secret: SECRET, now, toleranceSeconds: 60 })).event).to.equal('notification');
  });

  it('refuses missing and malformed headers, and a delivery ID that differs from the body\'s', async () => {
    const d = delivery();
    const without = (name: string) => ({ ...d, headers: Object.fromEntries(Object.entries(d.headers).filter(([k]) => k !== name)) });
    expect(await refusal(verifyWebhook(without('x-chat-signature-256'), { secret: SECRET, now }))).to.equal('signature_missing');
    expect(await refusal(verifyWebhook(without('x-chat-timestamp'), { secret: SECRET, now }))).to.equal('signature_missing');
    expect(await refusal(verifyWebhook({ ...d, headers: { ...d.headers, 'x-chat-signature-256': 'sha1=abc' } }, { secret: SECRET, now }))).to.equal('malformed');
    expect(await refusal(verifyWebhook({ ...d, headers: { ...d.headers, 'x-chat-timestamp': 'yesterday' } }, { secret: SECRET, now }))).to.equal('malformed');
    expect(await refusal(verifyWebhook(delivery({ headerDeliveryId: '01JGFJJZ00QNYBVPQTAT49MN0G' }), { secret: SECRET, now }))).to.equal('malformed');
  });

  it('acts on a delivery ID once, until released or forgotten after its time', async () => {
    let clock = NOW;
    const deliveries = new MemoryDeliveryIdStore({ ttlSeconds: 600, now: () => clock });
    const d = delivery();
    await verifyWebhook(d, { secret: SECRET, now, deliveries });
    expect(await refusal(verifyWebhook(d, { secret: SECRET, now, deliveries }))).to.equal('replayed');
    deliveries.release('01JGFJJZ00QNYBVPQTAT49MN0F');
    await verifyWebhook(d, { secret: SECRET, now, deliveries });
    clock += 601_000;
    expect(deliveries.claim('01JGFJJZ00QNYBVPQTAT49MN0F')).to.equal(true);
  });

  it('keeps at most maxEntries delivery IDs', () => {
    const deliveries = new MemoryDeliveryIdStore({ maxEntries: 3, now: () => NOW });
    for (const id of ['a', 'b', 'c', 'd']) expect(deliveries.claim(id)).to.equal(true);
    expect(deliveries.claim('d')).to.equal(false);
    expect(deliveries.claim('a')).to.equal(true);
  });
});
