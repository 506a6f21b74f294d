import { expect } from 'chai';
import { ChatApiError, ChatClient, type WebhookDeadLetter } from '@chat/client';
import { ulid } from 'ulid';
import { sharedStack, type Stack } from '../harness/stacks.ts';
import { FetchRecorder } from './sdk-fetch-recorder.ts';

describe('clients: the SDK registers webhooks and reads their dead letters (webhooks extension)', function () {
  this.timeout(120_000);
  let stack: Stack;
  let recorder: FetchRecorder;

  before(async () => {
    stack = await sharedStack('embedded');
  });
  beforeEach(() => {
    recorder = new FetchRecorder();
  });
  afterEach(() => {
    expect(recorder.violations, 'every answer the SDK saw complies with the OpenAPI document').to.deep.equal([]);
  });

  const client = (token: string) => new ChatClient({ baseUrl: stack.chat.url, token, fetch: recorder.fetch });

  async function rejection(promise: Promise<unknown>): Promise<ChatApiError> {
    const error = await promise.then(
      () => expect.fail('the call must be refused'),
      (e: unknown) => e,
    );
    expect(error).to.be.instanceOf(ChatApiError);
    return error as ChatApiError;
  }

  it('createWebhook registers with a made or a given secret, listWebhooks lists them oldest first without secrets, deleteWebhook removes one', async function () {
    const { actors } = await stack.scenario();
    const bot = client(await actors.readBot());
    // The all-in-one runs in development mode, so a receiver on this machine may use plain http.
    const made = await bot.createWebhook({ url: 'http://127.0.0.1:9/hooks/chat' });
    expect(made.webhook.url).to.equal('http://127.0.0.1:9/hooks/chat');
    expect(made.secret).to.match(/^[A-Za-z0-9_-]{43}$/);
    const given = await bot.createWebhook({ url: 'https://bot.example/hook', secret: 'a secret of the bot, 16+ chars' });
    expect(given.secret).to.equal('a secret of the bot, 16+ chars');
    expect(given.webhook.webhookId > made.webhook.webhookId).to.equal(true);

    const listed = await bot.listWebhooks();
    expect(listed).to.deep.equal([made.webhook, given.webhook]);
    expect(JSON.stringify(listed)).not.to.contain(made.secret);
    expect(await client(await actors.reader()).listWebhooks()).to.deep.equal([]);

    expect(await bot.deleteWebhook(made.webhook.webhookId)).to.equal(undefined);
    expect((await bot.listWebhooks()).map((w) => w.webhookId)).to.deep.equal([given.webhook.webhookId]);
    const again = await rejection(bot.deleteWebhook(made.webhook.webhookId));
    expect(again).to.include({ status: 404, code: 'RESOURCE_NOT_FOUND' });
    expect(recorder.to('DELETE', `/v1/webhooks/${made.webhook.webhookId}`).map((c) => c.outcome)).to.deep.equal([204, 404]);
  });

  it('refuses a URL the service will not send to with REQUEST_INVALID, saying why, and one webhook too many with RESOURCE_CONFLICT', async function () {
    const { actors } = await stack.scenario();
    const human = client(await actors.writer());
    for (const [url, reason] of [
      ['https://10.0.0.5/hook', 'private, loopback or link-local'],
      ['https://169.254.169.254/latest/meta-data', 'private, loopback or link-local'],
      ['http://bot.example/hook', 'https'],
      ['https://user:secret@bot.example/hook', 'credentials'],
    ] as const) {
      const refused = await rejection(human.createWebhook({ url }));
      expect(refused, url).to.include({ status: 400, code: 'REQUEST_INVALID' });
      expect(refused.message, url).to.contain(reason);
    }
    const tooShort = await rejection(human.createWebhook({ url: 'https://bot.example/hook', secret: 'short' }));
    expect(tooShort.code).to.equal('REQUEST_INVALID');
    // The all-in-one's default: 5 per principal.
    for (let i = 0; i < 5; i++) await human.createWebhook({ url: `https://bot.example/hook/${i}` });
    const past = await rejection(human.createWebhook({ url: 'https://bot.example/hook/5' }));
    expect(past).to.include({ status: 409, code: 'RESOURCE_CONFLICT' });
    // A refused registration is not retried.
    expect(recorder.to('POST', '/v1/webhooks').filter((c) => c.outcome === 409)).to.have.length(1);
  });

  it('reads dead letters page by page and as an iterator, redelivers none when none died, and keeps each principal to its own webhooks', async function () {
    const { actors } = await stack.scenario();
    const bot = client(await actors.readBot());
    const { webhook } = await bot.createWebhook({ url: 'https://bot.example/hook' });
    expect(await bot.listWebhookDeadLetters(webhook.webhookId, { limit: 10 })).to.deep.equal({ items: [], nextCursor: null });
    const walked: WebhookDeadLetter[] = [];
    for await (const letter of bot.webhookDeadLetters(webhook.webhookId, { pageSize: 5 })) walked.push(letter);
    expect(walked).to.deep.equal([]);
    expect(await bot.redeliverWebhookDeliveries(webhook.webhookId)).to.deep.equal({ redelivering: [] });
    expect(await bot.redeliverWebhookDeliveries(webhook.webhookId, { deliveryIds: [`${webhook.webhookId}.${ulid()}`] })).to.deep.equal({ redelivering: [] });

    const forged = await rejection(bot.listWebhookDeadLetters(webhook.webhookId, { cursor: 'not-a-cursor' }));
    expect(forged).to.include({ status: 400, code: 'CURSOR_INVALID' });
    expect(await rejection(bot.listWebhookDeadLetters(webhook.webhookId, { limit: 201 }))).to.include({ code: 'LIMIT_INVALID' });
    expect(await rejection(bot.redeliverWebhookDeliveries(webhook.webhookId, { deliveryIds: [] }))).to.include({ code: 'REQUEST_INVALID' });

    // Another principal is told the webhook does not exist, whatever it asks.
    const other = client(await actors.writer());
    for (const call of [
      () => other.listWebhookDeadLetters(webhook.webhookId),
      () => other.redeliverWebhookDeliveries(webhook.webhookId),
      () => other.deleteWebhook(webhook.webhookId),
    ]) {
      expect(await rejection(call())).to.include({ status: 404, code: 'RESOURCE_NOT_FOUND' });
    }
    expect((await bot.listWebhooks()).map((w) => w.webhookId)).to.deep.equal([webhook.webhookId]);
  });
});
